"""Token pieces as the pages draw them: a space of the text is ␣ (the legend says so), the space that separates
the bytes of a partial character is not, so the BPE steps of 人工智能 never show ␣ between bytes."""
from ops.models.tokenizer import readable
from viz.labels import visible


def test_bytes_of_a_partial_character_keep_a_plain_space():
    partial, is_partial = readable("人".encode()[:2])       # two of the three bytes of 人
    assert is_partial and partial == "<0xE4 0xBA>"
    assert visible(partial) == "<0xE4 0xBA>"
    assert visible(" " + partial + " x") == "␣<0xE4 0xBA>␣x"
    assert visible(" shanghai") == "␣shanghai" and visible("a\nb") == "a\\nb" and visible("") == "∅"


def test_the_bpe_steps_of_a_chinese_word_show_no_space_mark(bundled_tokenizer):
    from ops.lab.stage_data import bpe_steps
    for step in bpe_steps(bundled_tokenizer, "人工智能"):
        for part in step["parts"]:
            assert "␣" not in visible(part["piece"]), part
