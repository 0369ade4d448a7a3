"""`codex-mcp doctor` shows the skills (SEP-2640) a server serves: one line of their paths
under the server, and `skills` in its --json entry. Real processes: doctor, and our
library skills server."""

from __future__ import annotations

from pathlib import Path

from .doctor_helpers import PY, doctor, toml_list, toml_string, write_codex_config

SKILLS_SERVER = str(Path(__file__).resolve().parents[1] / "server/servers/skills_server.py")


def test_doctor_shows_a_servers_skills(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "acme" / "pdf-processing"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf-processing\ndescription: PDFs\n---\nx\n")
    args = [SKILLS_SERVER, str(tmp_path / "skills")]
    entry = f"[mcp_servers.docs]\ncommand = {toml_string(PY)}\nargs = {toml_list(args)}\n"
    config = write_codex_config(tmp_path / "codex", entry)
    ran = doctor(tmp_path, "--config", str(config))
    assert ran.code == 0, ran.out + ran.err
    assert "  skills: team/code-review, acme/pdf-processing\n" in ran.out, ran.out
    (server,) = doctor(tmp_path, "--config", str(config), "--json").json()["servers"]
    assert server["skills"] == ["team/code-review", "acme/pdf-processing"]
    assert [t["tool"] for t in server["tools"]] == ["ping"]
