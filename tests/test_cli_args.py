"""Bad arguments to `python -m grader` and `batch`: exit 2 with one line on stderr, before any
grading starts (LAB_SPEC "Additions": a path to --impl that does not exist, is a folder or
cannot be read is a bad argument). A module name that does not import stays a graded failure."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import ROOT, by_check, grade, run_grader
from grader import arguments, cli
from grader.report import outputs
from grader.report import messages

ONE_CHECK = "finish_before_expiry"
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def refused(proc, *words: str) -> None:
    """Exit 2, nothing graded, one line `grader: ...` naming `words`."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Score" not in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader: "), proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


def solution_copy(tmp_path):
    target = tmp_path / "queue.py"
    target.write_text((ROOT / "solutions" / "queue.py").read_text(encoding="utf-8"))
    return target


@pytest.mark.parametrize("impl, problem", [
    ("nope/queue.py", "no such file"),
    ("nope.py", "no such file"),
    ("lab/", "is a folder"),
    ("lab/queue.py/x.py", "no such file"),
])
def test_impl_path_that_cannot_be_graded_is_a_bad_argument(impl, problem):
    refused(run_grader("--impl", impl, "-k", ONE_CHECK), impl, problem)


def test_impl_that_is_a_symlink_loop_or_a_fifo_is_a_bad_argument(tmp_path):
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    refused(run_grader("--impl", str(tmp_path / "loop.py")), "loop.py", "cannot be read")
    os.mkfifo(tmp_path / "fifo.py")  # opening it would block: it must never be opened
    refused(run_grader("--impl", str(tmp_path / "fifo.py"), timeout=30), "not a regular file")


@pytest.mark.skipif(AS_ROOT, reason="root reads files whatever their mode")
def test_impl_that_cannot_be_read_is_a_bad_argument(tmp_path):
    target = solution_copy(tmp_path)
    target.chmod(0)
    try:
        refused(run_grader("--impl", str(target)), "cannot be read")
    finally:
        target.chmod(stat.S_IRUSR | stat.S_IWUSR)


@pytest.mark.parametrize("impl, words", [
    ("lab.queu", ["--impl lab.queu", "no module named 'lab.queu'", "did you mean --impl lab.queue?"]),
    ("lab.no_such_module", ["no module named 'lab.no_such_module'"]),
    ("no_such_top_level_module", ["no module named"]),
    ("..", ["no module named"]),
])
def test_module_name_that_cannot_be_found_is_a_bad_argument(impl, words):
    """A typo in a module name is refused in one line, as a missing file is (it used to be
    graded 0/100, exit 1)."""
    refused(run_grader("--impl", impl), *words)


def test_module_that_is_found_but_does_not_import_stays_a_graded_failure(tmp_path):
    (tmp_path / "broken_queue.py").write_text("import no_such_dependency\n", encoding="utf-8")
    out = tmp_path / "results.json"
    proc = run_grader("--impl", "broken_queue", "-k", ONE_CHECK, "--json", str(out),
                      cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert "does not import" in by_check(results)["finish-before-expiry"]["output"]


@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_report_in_a_missing_folder_is_refused_before_grading(tmp_path, flag):
    path = tmp_path / "no-such-folder" / "report.out"
    refused(run_grader("--impl", "solutions.queue", flag, str(path)), flag, "does not exist")
    refused(run_grader(flag, str(tmp_path)), flag, "is a folder")


@pytest.mark.skipif(AS_ROOT, reason="root writes in folders whatever their mode")
def test_report_in_a_read_only_folder_is_refused_before_grading(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    try:
        refused(run_grader("--json", str(folder / "r.json")), "--json", "cannot write")
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "fast"])
def test_timeout_scale_must_be_a_finite_positive_number(value):
    proc = run_grader("--timeout-scale", value, "-k", ONE_CHECK)
    assert proc.returncode == 2 and "--timeout-scale" in proc.stderr, proc.stderr
    assert "Score" not in proc.stdout


@pytest.mark.parametrize("flag, value", [("--timeout", "nan"), ("--timeout", "inf"),
                                         ("--timeout", "0"), ("--timeout-scale", "nan"),
                                         ("--timeout-scale", "-1"), ("--jobs", "0")])
def test_batch_refuses_the_same_numbers(tmp_path, flag, value):
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    solution_copy(tmp_path / "subs" / "alice")
    out = tmp_path / "grades"
    proc = run_grader("batch", str(tmp_path / "subs"), "--out", str(out), flag, value)
    assert proc.returncode == 2 and flag in proc.stderr, proc.stderr
    assert not out.exists()


def test_batch_refuses_an_out_folder_it_cannot_create(tmp_path):
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    solution_copy(tmp_path / "subs" / "alice")
    (tmp_path / "file").write_text("")
    proc = run_grader("batch", str(tmp_path / "subs"), "--out", str(tmp_path / "file" / "g"),
                      "--lang", "en")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f"The gradebook cannot be written in {tmp_path / 'file' / 'g'}: it cannot be created "
        "(Not a directory)."]


# -- the commands: help, and a mistyped command --------------------------------------------------
GRADING_OPTIONS = ("--impl", "--json", "--html", "--lang", "-k", "--timeout-scale", "--repeat",
                   "--replay", "--detail", "--config")


def test_help_lists_every_command_with_one_line_and_the_grading_options():
    proc = run_grader("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    for name in cli.SUBCOMMANDS:
        line = next(line for line in lines if line.startswith(f"  {name} "))
        assert line.split(None, 1)[1] == messages.text(messages.CLI_COMMAND(name), "en")
    for option in GRADING_OPTIONS:
        assert any(line.lstrip().startswith(option + " ") for line in lines), option


def test_a_command_and_an_output_format_are_each_declared_once(monkeypatch, tmp_path):
    """A command is one entry of grader.commands.SUBCOMMANDS: its help line's key follows. An
    output format is one outputs.Format: its flag (of any number of words), its argparse
    attribute and its help line's key follow."""
    from grader import commands

    assert cli.SUBCOMMANDS is commands.SUBCOMMANDS
    monkeypatch.setitem(commands.SUBCOMMANDS, "two-words", "grader.report.check_list")
    monkeypatch.setitem(messages.catalogue(), "cli.command.two-words",
                        {"en": "a command of two words", "ja": "二語のコマンド"})
    assert "cli.command.two-words" in messages.CLI_COMMAND.keys()
    extra = outputs.Format("two-words", "a report of two words", lambda report, config: "x\n",
                           lambda head: True)
    monkeypatch.setattr(outputs, "FORMATS", outputs.FORMATS + (extra,))
    monkeypatch.setitem(messages.catalogue(), "cli.option.two-words",
                        {"en": "write two words here", "ja": "二語をここに書き出す"})
    assert "cli.option.two-words" in outputs.OUTPUT_OPTION.keys()
    path = str(tmp_path / "r.txt")
    assert outputs.asked(cli.parser("en").parse_args(["--two-words", path])) == {
        "--two-words": path}
    shown = cli.parser("ja").format_help()
    assert "--two-words PATH" in shown and "二語をここに書き出す" in shown and "二語のコマンド" in shown


def test_help_in_japanese_commands_and_options():
    out = run_grader("--lang", "ja", "--help").stdout
    assert f"  quiz{' ' * 15}{messages.text(messages.CLI_COMMAND('quiz'), 'ja')}" in out
    assert f"{messages.text('cli.grading-options', 'ja')}:" in out
    assert messages.text("cli.option.repeat", "ja") in out
    assert "default: from the locale" not in out


#: `python -m grader ARGS` as in the student copy: the current folder's grader only (an editable
#: install of this repository would otherwise find grader/instructor/ here).
AS_STUDENT_COPY = """
import runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path
                    if not getattr(f, "__module__", "").startswith("__editable__")]
sys.argv[0] = "grader"
runpy.run_module("grader", run_name="__main__", alter_sys=True)
"""


def test_help_works_in_the_student_copy_without_the_instructor_tools(tmp_path):
    """The student copy has no grader/instructor/: the help names its commands without
    importing them (and `batch` there says it is not in this copy)."""
    shutil.copytree(ROOT / "grader", tmp_path / "grader",
                    ignore=shutil.ignore_patterns("__pycache__", "instructor"))
    shutil.copytree(ROOT / "lab", tmp_path / "lab", ignore=shutil.ignore_patterns("__pycache__"))

    def student(*args):
        return subprocess.run([sys.executable, "-c", AS_STUDENT_COPY, *args], cwd=tmp_path,
                              env={**os.environ, "LANG": "C.UTF-8"}, capture_output=True,
                              text=True, timeout=60)

    proc = student("--help")
    assert proc.returncode == 0, proc.stderr
    here = {name for name, module in cli.SUBCOMMANDS.items() if ".instructor." not in module}
    assert all(f"  {name} " in proc.stdout for name in here)
    # the commands this copy does not have are not offered (issue 29)
    assert not any(f"  {name} " in proc.stdout for name in set(cli.SUBCOMMANDS) - here)
    not_here = student("batch", "submissions")
    assert not_here.returncode == 2
    assert not_here.stderr == "grader: 'batch' is not available in this copy of the grader\n"


@pytest.mark.parametrize("word, meant", [("quizz", "quiz"), ("chekcs", "checks"),
                                         ("export-studnet", "export-student"),
                                         ("gradescope", "gradescope-bundle")])
def test_a_mistyped_command_is_refused_with_the_command_it_looks_like(word, meant):
    proc = run_grader(word)
    refused(proc)
    assert proc.stderr == f"grader: unknown command '{word}' (did you mean '{meant}'?)\n"


def test_a_mistyped_command_in_japanese():
    proc = run_grader("quizz", "--lang", "ja")
    refused(proc, "'quizz'", "'quiz'")
    assert "unknown command" not in proc.stderr


@pytest.mark.parametrize("word", ["lab.queue", "lab/queue.py", "solutions", "flibbertigibbet"])
def test_a_word_that_is_no_command_typo_is_left_to_argparse(word):
    """A module, a path (meant for --impl) or a word like no command: argparse's refusal."""
    proc = run_grader(word)
    assert proc.returncode == 2
    assert "unrecognized arguments" in proc.stderr and "unknown command" not in proc.stderr


@pytest.mark.parametrize("argv, starts", [
    ([], True), (["--impl", "x.py"], True), (["-k", "race"], True),
    (["checks"], False), (["watch", "--impl", "x.py"], False), (["batch"], False),
    (["--help"], False), (["-h"], False), (["--impl", "x.py", "--help"], False),
])
def test_only_a_grade_starts_its_zygote_before_the_grader_is_imported(monkeypatch, argv, starts):
    import grader.__main__ as entry
    from grader.harness.processes import zygote

    started = []
    monkeypatch.setattr(zygote, "start", lambda *a: started.append(True) or True)
    entry._start_zygote_early(argv)
    assert started == ([True] if starts else [])


def test_the_oldest_python_refused_is_the_one_below_pyprojects_floor():
    import grader.__main__ as entry
    from grader import config

    floor = config.toml().loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["requires-python"]
    assert floor == ">=%d.%d" % entry.OLDEST_PYTHON


def older_python() -> str | None:
    """An interpreter older than the grader's floor on this machine (pyenv's, or on PATH)."""
    import glob
    import grader.__main__ as entry

    below = "3.%d" % (entry.OLDEST_PYTHON[1] - 1)
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{below}.*/bin/python{below}")))
    return (found or [shutil.which(f"python{below}")])[-1]


@pytest.mark.skipif(older_python() is None, reason="no Python older than the floor here")
def test_a_python_older_than_the_floor_is_refused_with_one_line():
    """Run from a checkout (pip would not install it there), it is one line and exit 2, not
    a grade: Python 3.9 scored the reference 0, saying its import never finished."""
    proc = subprocess.run([older_python(), "-m", "grader", "--impl", "solutions.queue"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    refused(proc, "needs Python 3.10 or newer")


# -- nothing a student types hurts them (issue 29) -------------------------------------------------
def lab_copy(tmp_path):
    """A student's checkout: lab/ (the stubs and the store) in a folder of its own."""
    shutil.copytree(ROOT / "lab", tmp_path / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.parametrize("flag", [f.flag for f in outputs.FORMATS])
def test_a_report_flag_aimed_at_the_code_under_grade_is_refused(tmp_path, flag):
    home = lab_copy(tmp_path)
    before = (home / "lab" / "queue.py").read_bytes()
    proc = run_grader("-k", "finish-at-expiry", flag, "lab/queue.py", cwd=home)
    refused(proc, f"{flag} lab/queue.py", "file under grade")
    assert (home / "lab" / "queue.py").read_bytes() == before


@pytest.mark.parametrize("path, words", [
    ("lab/store.py", ["Python file"]),
    ("lab/notes.json", ["inside lab"]),
    ("other.py", ["Python file"]),
])
def test_a_report_flag_aimed_at_code_or_the_labs_folder_is_refused(tmp_path, path, words):
    home = lab_copy(tmp_path)
    store = (home / "lab" / "store.py").read_bytes()
    (home / "other.py").write_text("print('mine')\n")
    proc = run_grader("-k", "finish-at-expiry", "--json", path, cwd=home)
    refused(proc, *words)
    assert (home / "lab" / "store.py").read_bytes() == store
    assert (home / "other.py").read_text() == "print('mine')\n"
    assert not (home / "lab" / "notes.json").exists()


def test_a_symlink_to_the_code_under_grade_is_refused(tmp_path):
    home = lab_copy(tmp_path)
    (home / "report.html").symlink_to(home / "lab" / "queue.py")
    before = (home / "lab" / "queue.py").read_bytes()
    refused(run_grader("-k", "finish-at-expiry", "--html", "report.html", cwd=home),
            "file under grade")
    assert (home / "lab" / "queue.py").read_bytes() == before


@pytest.mark.parametrize("flag, other", [("--html", "--json"), ("--json", "--html"),
                                         ("--junit", "--markdown"),
                                         ("--prairielearn", "--json")])
def test_an_existing_file_that_is_no_report_of_that_kind_is_kept(tmp_path, flag, other):
    """A file of the student's (notes) or a report of another kind is not replaced; a report
    of the same kind (an earlier run's) is, and so is an empty file."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    refused(run_grader("-k", "finish-at-expiry", flag, str(notes)), "not replaced")
    assert notes.read_text() == "my notes\n"
    earlier = tmp_path / "earlier"
    proc = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", other, str(earlier))
    assert proc.returncode == 0, proc.stderr
    before = earlier.read_bytes()
    refused(run_grader("-k", "finish-at-expiry", flag, str(earlier)), "not replaced")
    assert earlier.read_bytes() == before
    again = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", other,
                       str(earlier), "--lang", "ja")
    assert again.returncode == 0, again.stderr  # a report of its own kind is replaced
    empty = tmp_path / "empty"
    empty.write_text("")
    proc = run_grader("--impl", "solutions.queue", "-k", "finish-at-expiry", flag, str(empty))
    assert proc.returncode == 0 and empty.stat().st_size > 0, proc.stderr


def test_every_format_recognises_what_it_wrote_in_both_languages(tmp_path):
    paths = {f.flag: tmp_path / f"r{f.dest}" for f in outputs.FORMATS}
    for lang in ("en", "ja"):
        argv = [x for flag, path in paths.items() for x in (flag, str(path))]
        proc = run_grader("--impl", "lab.queue", "-k", "finish-at-expiry", "--lang", lang, *argv)
        assert proc.returncode == 1, proc.stderr
        for output in outputs.FORMATS:
            head = paths[output.flag].read_text(encoding="utf-8")[:outputs.HEAD_BYTES]
            assert output.recognises(head), (output.flag, lang)
            others = [o.flag for o in outputs.FORMATS if o.recognises(head)]
            assert others == [output.flag], (output.flag, others)


def test_the_same_file_for_two_reports_is_refused(tmp_path):
    refused(run_grader("--json", str(tmp_path / "r.json"), "--prairielearn",
                       str(tmp_path / "r.json")), "same file as --json")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_a_path_where_no_file_can_be_made_is_refused_before_grading():
    """/proc passes os.access as root; a file made and removed there tells."""
    refused(run_grader("--json", "/proc/x.json"), "--json /proc/x.json", "cannot be written")


@pytest.mark.parametrize("impl, words", [
    ("lab.queue.py", ["no such file", "--impl lab/queue.py", "--impl lab.queue"]),
])
def test_impl_written_as_a_module_with_py_gets_both_spellings(impl, words):
    refused(run_grader("--impl", impl), *words)


def test_impl_that_is_not_a_py_file_is_a_bad_argument(tmp_path):
    target = tmp_path / "myqueue"
    target.write_text((ROOT / "solutions" / "queue.py").read_text(encoding="utf-8"))
    refused(run_grader("--impl", str(target)), "not a .py file")


@pytest.mark.parametrize("argv, words", [
    (["--bogus"], ["unrecognized arguments: --bogus", "see python -m grader --help"]),
    (["--jobs", "0"], ["--jobs", "at least 1"]),
    (["--lang", "fr"], ["--lang"]),
    (["batch"], ["DIR", "see python -m grader batch --help"]),
    (["quiz", "--nope"], ["--nope", "see python -m grader quiz --help"]),
    (["checks", "--nope"], ["--nope"]),
    (["hint"], ["see python -m grader hint --help"]),
    (["watch", "--nope"], ["--nope"]),
    (["export-student"], ["DIR"]),
    (["gradescope-bundle"], ["OUT.zip"]),
    (["classroom50"], ["OUT_DIR"]),
])
def test_an_argument_error_is_one_line(argv, words):
    refused(run_grader(*argv), *words)


def test_a_commands_arguments_or_the_status_it_returns_at_once(capsys):
    """arguments.Parser.parse_command, the one way a command's main reads its arguments: the
    namespace; or, with nothing to run, the status main returns (argparse would end the
    process): 0 after the help, 2 after a bad argument's one line."""
    p = arguments.Parser(prog="python -m grader thing")
    p.add_argument("n", type=arguments.positive_int)
    assert p.parse_command(["3"]).n == 3
    assert p.parse_command(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: python -m grader thing")
    assert p.parse_command(["0"]) == 2
    assert capsys.readouterr().err == ("grader: argument n: must be at least 1 "
                                       "(see python -m grader thing --help)\n")


@pytest.mark.parametrize("command", sorted(cli.SUBCOMMANDS))
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_command_returns_0_after_its_help_and_2_after_a_bad_argument(command, lang,
                                                                          capsys):
    """In-process (`python -m grader COMMAND` calls its main): a status, not SystemExit."""
    assert cli.run_command(command, ["--help", "--lang", lang]) == 0
    assert f"python -m grader {command}" in capsys.readouterr().out
    assert cli.run_command(command, ["--no-such-option", "--lang", lang]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: ") and err.count("\n") == 1, err
    assert err.endswith(f"(see python -m grader {command} --help)\n"), err


@pytest.mark.parametrize("command", ["export-student", "gradescope-bundle", "classroom50"])
def test_the_starter_code_flag_a_refusal_names_is_accepted(command):
    proc = run_grader(command, "--help")
    assert proc.returncode == 0 and "--allow-starter-code" in proc.stdout


def test_grading_from_the_labs_own_folder_works():
    """`cd lab && python -m grader`: the lab's queue.py is named like the standard library's
    queue, which the grader imports; it used to end in a 35-line traceback. The grade runs (the
    stubs: exit 1, every check graded), by default and with --impl queue.py, and so does the
    pytest path (with only the grader's own plugin, as in a student's environment)."""
    for argv in ([], ["--impl", "queue.py"]):
        proc = run_grader(*argv, "-k", ONE_CHECK, cwd=ROOT / "lab")
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout
        assert "not implemented yet" in proc.stdout
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "grader.plugin.pytest_plugin", "--pyargs", "grader.checks",
                           "-k", "finish-before-expiry"], cwd=ROOT / "lab", env=env,
                          capture_output=True, text=True, timeout=300)
    assert "1 failed" in proc.stdout, proc.stdout + proc.stderr
    assert "not implemented yet" in proc.stdout


def test_the_gradebooks_seed_cell_replays_as_it_is():
    """The gradebook writes a seed with its digits grouped by underscores, which spreadsheets keep
    as text (a 19-digit number they round to 15 digits); --replay reads the cell as it is."""
    from grader.instructor.gradebook import seed_cell

    for seed in (0, 7, 1234, 2 ** 63 - 1, 9_007_199_254_740_993):
        cell = seed_cell(seed)
        assert not cell.isdigit() or seed < 1000
        assert arguments.seed(cell) == seed
    assert seed_cell(None) == ""
