"""Fresh names: TVM's rules, as a pure function of the names in use."""

from tirfun.rewrites.names import fresh_name, fresh_names, fuse_base, merge_base, split_bases, suffixed


def test_a_free_name_is_kept():
    assert fresh_name("i_0", {"i"}) == "i_0"


def test_a_taken_name_gets_the_first_free_suffix():
    assert fresh_name("i_0", {"i_0"}) == "i_0_1"
    assert fresh_name("i_0", {"i_0", "i_0_1", "i_0_2"}) == "i_0_3"


def test_names_chosen_together_avoid_each_other():
    assert fresh_names(["u", "u"], set()) == ["u", "u_1"]
    assert fresh_names(split_bases("i", 3), {"i_1"}) == ["i_0", "i_1_1", "i_2"]


def test_tvm_bases():
    assert split_bases("i", 2) == ["i_0", "i_1"]
    assert fuse_base(["i", "j", "k"]) == "i_j_k_fused"
    assert merge_base("i") == "i_m"
    assert suffixed("A", "shared") == "A_shared" and suffixed("B", "rf") == "B_rf"


def test_names_are_identifiers():
    assert fresh_name("a.b-c", set()) == "a_b_c"
    assert fresh_name("0x", set()) == "v_0x"


def test_the_choice_depends_only_on_the_names_in_use():
    taken = {"i_0", "i_0_1", "x"}
    assert fresh_name("i_0", taken) == fresh_name("i_0", set(sorted(taken, reverse=True)))
