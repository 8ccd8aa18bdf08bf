"""`python -m grader catalogue` (grader/instructor/catalogue.py): the catalogue's files are in one
layout, which the tool reads and writes byte for byte; `set` adds or changes a key in both
languages where it belongs and refuses texts whose placeholders differ; `remove` takes a key out.
"""

from __future__ import annotations

import json
import shutil

import pytest

from grader.instructor import catalogue
from grader.report import messages

FILES = sorted(messages.CATALOGUE_DIR.glob("*.json"))


@pytest.fixture
def folder(tmp_path):
    """A copy of the catalogue's folder, to write in."""
    copy = tmp_path / "catalogue"
    shutil.copytree(messages.CATALOGUE_DIR, copy)
    return copy


def entries(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def line_of(path, key: str) -> int:
    return next(i for i, line in enumerate(lines(path)) if line.startswith(f'  "{key}": '))


# -- (i) the layout is canonical ---------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_catalogue_file_is_written_back_byte_for_byte(path):
    """Loading a file and writing it again with the tool's writer gives the same bytes: the
    files are in the layout (run `python -m grader catalogue format` after a hand edit)."""
    assert catalogue.render(catalogue.read(path)) == path.read_text(encoding="utf-8")


def test_the_layout_keeps_the_groups_and_puts_one_key_a_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{\n  "a.b": {"en": "x", "ja": "ｘ"},\n  "a.c": {"en": "{n} é", "ja": "{n}"},'
                    '\n\n  "b.a": {"en": "\\"q\\"", "ja": "q"}\n}\n', encoding="utf-8")
    groups = catalogue.read(path)
    assert [[key for key, _ in group] for group in groups] == [["a.b", "a.c"], ["b.a"]]
    assert catalogue.render(groups) == path.read_text(encoding="utf-8")


def test_a_file_in_another_layout_is_read_and_written_in_the_layout(tmp_path):
    """A key's texts over several lines (as json.dump(indent=2) writes them) are the same
    entries; `format` writes them one key a line, in the same order."""
    path = tmp_path / "x.json"
    data = {"z.one": {"en": "{a} one", "ja": "{a} 一"}, "a.two": {"en": "two", "ja": "二"}}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert catalogue.format_files(folder=tmp_path) == [(path, True)]
    assert lines(path) == ["{", '  "z.one": {"en": "{a} one", "ja": "{a} 一"},',
                           '  "a.two": {"en": "two", "ja": "二"}', "}", ""]
    assert entries(path) == data and list(entries(path)) == list(data)
    assert catalogue.format_files(folder=tmp_path) == [(path, False)]


# -- (ii) set -----------------------------------------------------------------------------------------
def test_set_adds_a_key_in_both_languages_after_the_keys_like_it(folder):
    path = folder / "boundaries.json"
    before = lines(path)
    written, added = catalogue.set_message("check.finish-at-expiry.example",
                                           {"en": "At {t} ms.", "ja": "{t} ms で。"},
                                           folder=folder)
    assert (written, added) == (path, True)
    assert entries(path)["check.finish-at-expiry.example"] == {"en": "At {t} ms.",
                                                               "ja": "{t} ms で。"}
    at = line_of(path, "check.finish-at-expiry.example")
    assert lines(path)[at - 1].startswith('  "check.finish-at-expiry.hint": ')  # in its group
    assert lines(path)[:at] + lines(path)[at + 1:] == before  # nothing else moved
    assert catalogue.render(catalogue.read(path)) == path.read_text(encoding="utf-8")


def test_set_changes_a_key_where_it_is(folder):
    path = folder / "boundaries.json"
    before = lines(path)
    at = line_of(path, "check.reclaim-at-expiry.why")
    written, added = catalogue.set_message("check.reclaim-at-expiry.why",
                                           {"en": "New why.", "ja": "新しい理由。"},
                                           folder=folder)
    assert (written, added) == (path, False)
    after = lines(path)
    assert after[at] == '  "check.reclaim-at-expiry.why": {"en": "New why.", "ja": "新しい理由。"},'
    assert after[:at] + after[at + 1:] == before[:at] + before[at + 1:]


def test_a_new_check_gets_a_group_of_its_own_in_the_file_named(folder):
    path = folder / "tokens.json"
    for part in ("title", "why", "hint"):
        catalogue.set_message(f"check.new-rule.{part}", {"en": part, "ja": part}, "tokens",
                              folder)
    text = lines(path)
    at = line_of(path, "check.new-rule.title")
    assert text[at - 1] == "" and text[at + 1].startswith('  "check.new-rule.why": ')
    assert text[at + 2].startswith('  "check.new-rule.hint": ')
    assert [k for k in entries(path) if k.startswith("check.new-rule.")] == [
        "check.new-rule.title", "check.new-rule.why", "check.new-rule.hint"]


def test_a_new_family_gets_a_file_of_its_own(folder):
    path, added = catalogue.set_message("check.new-rule.title", {"en": "T {x}", "ja": "題 {x}"},
                                        "new_family", folder)
    assert added and path == folder / "new_family.json"
    assert lines(path) == ["{", '  "check.new-rule.title": {"en": "T {x}", "ja": "題 {x}"}', "}",
                           ""]


def test_a_new_key_like_keys_of_several_files_needs_its_file(folder):
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(catalogue.CatalogueError, match="--file FAMILY.*boundaries.*tokens"):
        catalogue.set_message("check.new-rule.title", {"en": "t", "ja": "t"}, folder=folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("en, ja", [
    ("{name} finished", "{nom} が完了"),  # another name
    ("{name} finished at {t}", "{name} が完了"),  # one missing
    ("done", "{name} 完了"),  # one too many
])
def test_set_refuses_texts_whose_placeholders_differ(folder, en, ja):
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(catalogue.CatalogueError, match="same placeholders"):
        catalogue.set_message("check.finish-at-expiry.example", {"en": en, "ja": ja},
                              folder=folder)
    with pytest.raises(catalogue.CatalogueError, match="same placeholders"):
        catalogue.set_message("check.finish-at-expiry.why", {"en": en, "ja": ja}, folder=folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_placeholders_are_compared_by_name_as_the_catalogue_test_compares_them(folder):
    path, added = catalogue.set_message("check.finish-at-expiry.example",
                                        {"en": "{s:g} s, {row[id]}", "ja": "{row} の {s} 秒"},
                                        folder=folder)
    assert added and entries(path)["check.finish-at-expiry.example"]["ja"] == "{row} の {s} 秒"
    with pytest.raises(catalogue.CatalogueError, match="not a template"):
        catalogue.set_message("check.finish-at-expiry.example", {"en": "a { b", "ja": "a"},
                              folder=folder)
    with pytest.raises(catalogue.CatalogueError, match="ja text is empty"):
        catalogue.set_message("check.finish-at-expiry.example", {"en": "a", "ja": " "},
                              folder=folder)


def test_a_key_moves_to_another_file_only_through_remove(folder):
    with pytest.raises(catalogue.CatalogueError, match="in boundaries.json, not tokens.json"):
        catalogue.set_message("check.finish-at-expiry.why", {"en": "w", "ja": "w"}, "tokens",
                              folder)


def test_the_command_sets_and_says_so_in_one_line(folder, capsys):
    code = catalogue.main(["set", "check.finish-at-expiry.example", "--en", "At {t}.",
                           "--ja", "{t} で。", "--lang", "en"], folder=folder)
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out == f"{folder / 'boundaries.json'}: check.finish-at-expiry.example added\n"
    code = catalogue.main(["set", "check.finish-at-expiry.example", "--en", "At {t}.",
                           "--ja", "で。", "--lang", "en"], folder=folder)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("grader: check.finish-at-expiry.example: ") and "(en: {t}; ja: -)" in err



def test_new_group_starts_a_group_of_its_own_after_the_group_it_would_have_joined(folder):
    """`set --new-group`: the new key opens a blank-line group of its own, right after the
    group of the key it would have followed; the keys set after it join it; nothing else
    moves."""
    path = folder / "boundaries.json"
    before = lines(path)
    catalogue.set_message("check.finish-at-expiry.example", {"en": "At {t}.", "ja": "{t} で。"},
                          folder=folder, new_group=True)
    text = lines(path)
    at = line_of(path, "check.finish-at-expiry.example")
    assert text[at - 2].startswith('  "check.finish-at-expiry.hint": ') and text[at - 1] == ""
    assert text[at + 1] == "" and text[at + 2].startswith('  "check.finish-after-expiry.title": ')
    assert text[:at - 1] + text[at + 1:] == before  # one group more, the others as they were
    catalogue.set_message("check.finish-at-expiry.example-row", {"en": "r", "ja": "r"},
                          folder=folder)
    assert lines(path)[at + 1].startswith('  "check.finish-at-expiry.example-row": ')
    assert catalogue.render(catalogue.read(path)) == path.read_text(encoding="utf-8")


def test_new_group_opens_a_group_where_the_key_would_join_one(folder):
    """A key whose parent has keys already (detail.*) joins their group; with --new-group it
    is the first of its own, and set then remove leaves the file as it was."""
    path = folder / "race.json"
    before = path.read_bytes()
    catalogue.set_message("detail.race-new", {"en": "n {who}", "ja": "n {who}"}, "race", folder)
    at = line_of(path, "detail.race-new")
    assert lines(path)[at - 1].startswith('  "detail.race-paused": ')  # joined: no blank line
    catalogue.remove_message("detail.race-new", folder)
    assert path.read_bytes() == before
    assert catalogue.main(["set", "detail.race-new", "--en", "n {who}", "--ja", "n {who}",
                           "--file", "race", "--new-group"], folder=folder) == 0
    at = line_of(path, "detail.race-new")
    assert lines(path)[at - 1] == "" and lines(path)[at - 2].startswith('  "detail.race-paused"')
    assert [[k for k, _ in g] for g in catalogue.read(path)][-1] == ["detail.race-new"]
    catalogue.remove_message("detail.race-new", folder)
    assert path.read_bytes() == before


def test_new_group_is_refused_for_a_key_that_is_there_and_nothing_is_written(folder, capsys):
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(catalogue.CatalogueError, match="--new-group"):
        catalogue.set_message("check.finish-at-expiry.why", {"en": "w", "ja": "w"},
                              folder=folder, new_group=True)
    assert catalogue.main(["set", "check.finish-at-expiry.why", "--en", "w", "--ja", "w",
                           "--new-group", "--lang", "ja"], folder=folder) == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: check.finish-at-expiry.why") and err.count("\n") == 1
    assert "--new-group" in err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


# -- (iii) remove -------------------------------------------------------------------------------------
def test_remove_takes_the_key_out_and_set_then_remove_leaves_the_file_as_it_was(folder):
    path = folder / "boundaries.json"
    before = path.read_bytes()
    catalogue.set_message("check.finish-at-expiry.example", {"en": "e", "ja": "e"},
                          folder=folder)
    assert catalogue.remove_message("check.finish-at-expiry.example", folder) == path
    assert path.read_bytes() == before
    catalogue.remove_message("check.finish-at-expiry.why", folder)
    assert "check.finish-at-expiry.why" not in entries(path)
    assert "check.finish-at-expiry.hint" in entries(path)


def test_removing_a_groups_last_key_removes_the_group(folder):
    path = folder / "tokens.json"
    before = path.read_bytes()
    catalogue.set_message("check.new-rule.title", {"en": "t", "ja": "t"}, "tokens", folder)
    assert path.read_bytes() != before
    catalogue.remove_message("check.new-rule.title", folder)
    assert path.read_bytes() == before


def test_remove_refuses_an_unknown_key(folder, capsys):
    assert catalogue.main(["remove", "check.no-such-check.title", "--lang", "en"],
                          folder=folder) == 2
    assert capsys.readouterr().err == (
        "grader: no message check.no-such-check.title in the catalogue\n")
