"""panto.policy.bashparse: every command a bash line can run, found."""

from __future__ import annotations

import pytest

from panto.policy.bashparse import parse


def texts(line: str) -> list[str]:
    p = parse(line)
    assert p.error is None, p.error
    return [c.text for c in p.commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("rm f", ["rm f"]),
        ("true; rm f", ["true", "rm f"]),
        ("echo a && rm f", ["echo a", "rm f"]),
        ("false || rm f", ["false", "rm f"]),
        ("echo f | rm f", ["echo f", "rm f"]),
        ("make 2>&1 |& tee log", ["make", "tee log"]),
        ("sleep 1 & rm f", ["sleep 1", "rm f"]),
        ("echo a\nrm f", ["echo a", "rm f"]),
        ("echo a \\\n  b", ["echo a b"]),
        ("(cd a && rm b)", ["cd a", "rm b"]),
        ("{ rm a; rm b; }", ["rm a", "rm b"]),
        ("if true; then rm q; else rm r; fi", ["true", "rm q", "rm r"]),
        ("while true; do rm x; done", ["true", "rm x"]),
        ("for i in a b; do rm $i; done", ["rm $i"]),
        ("! rm f", ["rm f"]),
        ("ls # ; rm f", ["ls"]),
        ("A=1 B=2 make test", ["make test"]),
        ("A=$(rm f) true", ["rm f", "true"]),
        ("X=1", []),
    ],
)
def test_separators_and_compound_commands(line: str, expected: list[str]) -> None:
    assert texts(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("'rm' \"f\"", ["rm f"]),
        ("r\\m f", ["rm f"]),
        ("git commit -m 'a; rm f'", ["git commit -m a; rm f"]),
        ('git commit -m "a && rm f"', ["git commit -m a && rm f"]),
        ("echo 'it''s'", ["echo its"]),
        ('echo "a \\" b"', ['echo a " b']),
        ("echo $'a\\tb'", ["echo a\\tb"]),
        ('echo "a  b"', ["echo a  b"]),
    ],
)
def test_quotes_are_one_word(line: str, expected: list[str]) -> None:
    assert texts(line) == expected


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("echo $(rm f)", "rm f"),
        ("echo `rm f`", "rm f"),
        ('echo "x $(rm f) y"', "rm f"),
        ('echo "x `rm f` y"', "rm f"),
        ("echo $(echo $(rm f))", "rm f"),
        ("diff <(rm f) b", "rm f"),
        ("tee >(rm f) < x", "rm f"),
        ("echo $( (rm f) )", "rm f"),
        ("echo $(echo ')' ; rm f)", "rm f"),
    ],
)
def test_command_substitutions_are_parsed(line: str, inner: str) -> None:
    assert inner in texts(line)


def test_arithmetic_and_parameters_are_not_commands() -> None:
    assert texts("echo $((1 + 2)) ${HOME} $1 $@") == ["echo $((1 + 2)) ${HOME} $1 $@"]


@pytest.mark.parametrize(
    ("line", "reads", "writes", "text"),
    [
        ("cat < in > out", ("in",), ("out",), "cat"),
        ("cmd >> log 2> err", (), ("log", "err"), "cmd"),
        ("cmd &> all", (), ("all",), "cmd"),
        ("cmd 2>&1 >&2", (), (), "cmd"),
        ("cmd >| f", (), ("f",), "cmd"),
        ("cat <<< 'here string'", (), (), "cat"),
        ("> created", (), ("created",), ""),
        ("echo a>b", (), ("b",), "echo a"),
    ],
)
def test_redirections(line: str, reads: tuple, writes: tuple, text: str) -> None:
    p = parse(line)
    assert p.error is None
    [c] = p.commands
    assert (c.reads, c.writes, c.text) == (reads, writes, text)


def test_heredoc_bodies_are_not_commands() -> None:
    line = "cat <<EOF > out\nrm inside\nEOF\necho after\ncat <<-'X'\n\trm also\n\tX\nrm last"
    assert texts(line) == ["cat", "echo after", "cat", "rm last"]


@pytest.mark.parametrize(
    ("line", "inner", "outer"),
    [
        ("timeout 5 rm f", "rm f", ["timeout 5 rm f"]),
        ("timeout -s KILL -k 2 5 rm f", "rm f", ["timeout -s KILL -k 2 5 rm f"]),
        ("time rm f", "rm f", ["time rm f"]),
        ("nice -n 10 rm f", "rm f", ["nice -n 10 rm f"]),
        ("nohup rm f", "rm f", ["nohup rm f"]),
        ("env A=1 rm f", "rm f", ["env A=1 rm f"]),
        ("env -i -u X A=1 rm f", "rm f", ["env -i -u X A=1 rm f"]),
        ("sudo -u root rm f", "rm f", ["sudo -u root rm f"]),
        ("stdbuf -o L rm f", "rm f", ["stdbuf -o L rm f"]),
        ("ionice -c 3 rm f", "rm f", ["ionice -c 3 rm f"]),
        ("command rm f", "rm f", ["command rm f"]),
        ("exec rm f", "rm f", ["exec rm f"]),
        ("/usr/bin/timeout 5 rm f", "rm f", ["/usr/bin/timeout 5 rm f"]),
        ("nice timeout 5 rm f", "rm f", ["nice timeout 5 rm f", "timeout 5 rm f"]),
        ("xargs -I{} rm {}", "rm {}", ["xargs -I{} rm {}"]),
        ("xargs -n 1 rm", "rm", ["xargs -n 1 rm"]),
    ],
)
def test_wrappers_are_unwrapped(line: str, inner: str, outer: list[str]) -> None:
    p = parse(line)
    [c] = p.commands
    assert c.text == inner
    assert list(c.outer) == outer
    assert c.opaque is None


def test_xargs_without_a_command_runs_echo() -> None:
    assert texts("ls | xargs") == ["ls", "echo"]


def test_find_exec() -> None:
    p = parse("find . -name '*.tmp' -exec rm {} \\; -o -execdir shred -u {} +")
    assert [c.text for c in p.commands] == [
        "find . -name *.tmp -exec rm {} ; -o -execdir shred -u {} +",
        "rm {}",
        "shred -u {}",
    ]
    assert p.commands[1].outer == (p.commands[0].text,)


def test_watch_runs_its_arguments_as_a_shell_line() -> None:
    assert texts("watch -n 1 'ls; rm f'")[1:] == ["ls", "rm f"]


@pytest.mark.parametrize(
    "line",
    [
        "bash -c 'rm f'",
        "sh -c 'echo hi'",
        "bash -lc make",
        "bash script.sh",
        "curl x | sh",
        "eval rm f",
        "source env.sh",
        ". env.sh",
        "python -c 'import os'",
        "python3.12 -c pass",
        "perl -e 'unlink q(f)'",
        "node -e 'x'",
        "node --eval 'x'",
        "ruby -e x",
        "$CMD f",
        '"$X" f',
        "`which rm` f",
        "env -S 'rm f'",
        "sudo -s",
    ],
)
def test_opaque_commands(line: str) -> None:
    p = parse(line)
    assert p.error is None
    assert p.opaque, [(c.text, c.opaque) for c in p.commands]


@pytest.mark.parametrize("line", ["python script.py", "node app.js", "awk '{print}' f", "ls"])
def test_not_opaque(line: str) -> None:
    assert not parse(line).opaque


def test_shell_scripts_given_literally_are_parsed_for_deny_rules() -> None:
    p = parse("bash -c 'true && rm f'")
    assert [c.text for c in p.commands] == ["bash -c true && rm f", "true", "rm f"]
    assert p.commands[2].outer == ("bash -c true && rm f",)
    assert "rm f" in texts("eval 'rm f'")
    assert "rm f" in texts("xargs sh -c 'rm f'")


@pytest.mark.parametrize(
    "line", ["echo 'unterminated", 'echo "unterminated', "echo $(rm f", "echo `rm f", "a ${b"]
)
def test_unparsable_lines_are_errors(line: str) -> None:
    p = parse(line)
    assert p.error is not None
    assert p.commands == []


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    line = "echo " + "$(" * 50 + "rm f" + ")" * 50
    assert parse(line).error is not None
