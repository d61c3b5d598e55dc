"""The demo (the main job): it must pass and print its report."""

from opbridge.cli import main


def test_demo_passes_and_reports(capsys):
    assert main(["demo", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    for expected in ["exporter: dynamo", "exporter: legacy", "opbridge::DeformConv2d", "opbridge::GridSample", "opbridge::RoiAlign",
                     "opbridge::SoftNonMaxSuppression", "time per run: ORT", "demo passed"]:
        assert expected in out, expected
    assert "MISMATCH" not in out
