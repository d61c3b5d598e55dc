"""The demo (the main job): it must pass and print its report."""

from opbridge.cli import main


def test_demo_passes_and_reports(capsys):
    assert main(["demo", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    for expected in ["exporter: dynamo", "exporter: legacy", "opbridge::DeformConv2d", "opbridge::GridSample", "opbridge::RoiAlign",
                     "opbridge::SoftNonMaxSuppression", "time per run: ORT", "demo passed"]:
        assert expected in out, expected
    assert "MISMATCH" not in out


def make_roi_model():
    """A factory for `opbridge verify`: returns (model, example args)."""
    import torch
    import torchvision

    class Pool(torch.nn.Module):
        def forward(self, x, rois):
            return torchvision.ops.roi_align(x, rois, (3, 3), 0.5, 2, True)

    rois = torch.tensor([[0.0, 1.0, 2.0, 12.0, 14.0], [0.0, 0.0, 0.0, 5.0, 5.0]])
    return Pool(), (torch.randn(1, 2, 10, 10), rois)


def test_verify_command_on_a_user_factory(capsys):
    assert main(["verify", "test_demo:make_roi_model"]) == 0
    out = capsys.readouterr().out
    assert out.count("verdict: all outputs match") == 2 and "opbridge::RoiAlign" in out


def test_verify_command_reports_a_mismatch(monkeypatch, capsys):
    """A model whose ORT run differs from eager makes `opbridge verify` fail (exit 1)."""
    import importlib

    # The module, imported here when no earlier test did (the package attribute is the function).
    verify_module = importlib.import_module("opbridge.verify")

    real_compare = verify_module._compare

    def broken_compare(name, expected, actual, comparison="model"):
        return real_compare(name, expected, actual + 1.0, comparison)

    monkeypatch.setattr(verify_module, "_compare", broken_compare)
    assert main(["verify", "test_demo:make_roi_model", "--exporter", "dynamo"]) == 1
    assert "MISMATCH" in capsys.readouterr().out



def make_dynamic_roi_model():
    """A factory that also returns verify options: the number of RoIs is a dynamic axis."""
    model, args = make_roi_model()
    return model, args, {"dynamic_axes": {"rois": {0: "num_rois"}}}


def test_verify_command_checks_dynamic_axes_from_the_factory(capsys):
    """The factory's options reach opbridge.verify: the RoI count is also checked at 0 and at
    another size."""
    assert main(["verify", "test_demo:make_dynamic_roi_model", "--exporter", "legacy"]) == 0
    out = capsys.readouterr().out
    assert "verdict: all outputs match" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("num_rois")]
    assert [(r[4:7], r[-1]) for r in rows] == [(["2", "->", "4"], "ok"), (["2", "->", "0"], "ok")], rows
