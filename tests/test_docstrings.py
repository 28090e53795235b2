"""The examples in the public docstrings run and print what they say."""

import doctest
import importlib

import pytest

MODULES = ["msvm.reinforced", "msvm.robust", "msvm.weighted", "msvm.weston_watkins",
           "msvm.angle", "msvm.targeted", "msvm.plotting", "msvm.datasets._targeted_examples",
           "msvm.datasets._simulated", "msvm.datasets._robust_examples",
           "msvm.datasets._pendigits", "msvm.metrics", "msvm.model_selection"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_estimator_documents_its_parameters():
    import msvm

    for name in msvm.__all__:
        obj = getattr(msvm, name)
        if not isinstance(obj, type):
            continue
        doc = obj.__doc__
        assert "{kernel_parameters}" not in doc and "{function_attributes}" not in doc
        for param in obj().get_params():
            assert f"    {param} :" in doc, f"{name} does not document {param}"


def test_documented_kernel_default_is_the_signature_default():
    import inspect
    import re

    import msvm

    for name in msvm.__all__:
        cls = getattr(msvm, name)
        if not inspect.isclass(cls):
            continue
        default = inspect.signature(cls.__init__).parameters["kernel"].default
        documented = re.search(r"kernel : .*default=('\w+')", cls.__doc__).group(1)
        assert documented == repr(default), name
