"""Sampling page: repetition penalty -> temperature -> top-k -> top-p; out-of-range values are a message."""
from __future__ import annotations

import pytest

from apptest_utils import no_exception, page_ok

PAGE = "sampling"


def check_sampling(at):
    assert not at.error
    at.number_input(key="smp_temp").set_value(-1.0)
    at.run()
    no_exception(at)
    assert at.error and "temperature" in at.error[0].value
    at.number_input(key="smp_temp").set_value(0.0)
    at.run()
    no_exception(at)
    assert not at.error
    at.number_input(key="smp_topp").set_value(1.5)
    at.run()
    no_exception(at)
    assert at.error and "top_p" in at.error[0].value


@pytest.mark.real
def test_sampling_real():
    check_sampling(page_ok(PAGE))


@pytest.mark.real
def test_sampling_real_batch_and_single_token():
    page_ok(PAGE, prompt="I like shanghai\nHi")
    page_ok(PAGE, prompt="Hi")


def test_sampling_tiny(tiny_app_dense):
    check_sampling(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


def test_sampling_tiny_moe(tiny_app_moe):
    check_sampling(page_ok(PAGE, source=tiny_app_moe))
