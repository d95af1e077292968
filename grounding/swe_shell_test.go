package grounding

import (
	"reflect"
	"testing"
)

func TestParseShell(t *testing.T) {
	type cmd struct {
		Args      []string
		Redirects []string
		Heredoc   string
		PipedIn   bool
	}
	tests := []struct {
		name string
		in   string
		want []cmd
	}{
		{"simple", "ls -la", []cmd{{Args: []string{"ls", "-la"}}}},
		{"and chain", "cd /testbed && python reproduce.py", []cmd{{Args: []string{"cd", "/testbed"}}, {Args: []string{"python", "reproduce.py"}}}},
		{"or and semicolon", "grep x f || echo none; ls", []cmd{{Args: []string{"grep", "x", "f"}}, {Args: []string{"echo", "none"}}, {Args: []string{"ls"}}}},
		{"pipe", "nl -ba a.py | sed -n '10,20p'", []cmd{{Args: []string{"nl", "-ba", "a.py"}}, {Args: []string{"sed", "-n", "10,20p"}, PipedIn: true}}},
		{"double quotes and escapes", `grep -n "def \"x\"" a\ b.py`, []cmd{{Args: []string{"grep", "-n", `def "x"`, "a b.py"}}}},
		{"redirects", "python run.py > out.txt 2>&1 && cat out.txt >> log.txt 2>/dev/null",
			[]cmd{{Args: []string{"python", "run.py"}, Redirects: []string{"out.txt"}}, {Args: []string{"cat", "out.txt"}, Redirects: []string{"log.txt"}}}},
		{"heredoc to file", "cat <<'EOF' > reproduce.py\nimport x\nprint(x)\nEOF\npython reproduce.py",
			[]cmd{{Args: []string{"cat"}, Redirects: []string{"reproduce.py"}, Heredoc: "import x\nprint(x)\n"}, {Args: []string{"python", "reproduce.py"}}}},
		{"heredoc redirect first", "cat > fix.py << \"END\"\nopen('a/b.py', 'w')\nEND",
			[]cmd{{Args: []string{"cat"}, Redirects: []string{"fix.py"}, Heredoc: "open('a/b.py', 'w')\n"}}},
		{"heredoc dash strips tabs", "cat <<-EOF > a.txt\n\tx\n\tEOF\nls", []cmd{{Args: []string{"cat"}, Redirects: []string{"a.txt"}, Heredoc: "\tx\n"}, {Args: []string{"ls"}}}},
		{"python stdin heredoc", "python3 - <<'PY'\nprint(1)\nPY", []cmd{{Args: []string{"python3", "-"}, Heredoc: "print(1)\n"}}},
		{"unterminated heredoc", "cat <<EOF > a.py\nx = 1", []cmd{{Args: []string{"cat"}, Redirects: []string{"a.py"}, Heredoc: "x = 1\n"}}},
		{"line continuation", "cd repro && \\\nmkdir -p src", []cmd{{Args: []string{"cd", "repro"}}, {Args: []string{"mkdir", "-p", "src"}}}},
		{"comment", "ls # list\n# only a comment\npwd", []cmd{{Args: []string{"ls"}}, {Args: []string{"pwd"}}}},
		{"env and wrappers", "PYTHONPATH=. timeout 60 python -m pytest -x", []cmd{{Args: []string{"python", "-m", "pytest", "-x"}}}},
		{"command substitution stays a word", `export P=$(pwd) && echo "$(ls | wc -l)"`, []cmd{{Args: []string{"export", "P=$(pwd)"}}, {Args: []string{"echo", "$(ls | wc -l)"}}}},
		{"subshell and for loop", "(cd sub && ls); for f in *.py; do grep x $f; done",
			[]cmd{{Args: []string{"cd", "sub"}}, {Args: []string{"ls"}}, {Args: []string{"grep", "x", "$f"}}}},
		{"ansi-c quote", `printf $'a\nb' > x`, []cmd{{Args: []string{"printf", "a\nb"}, Redirects: []string{"x"}}}},
		{"background and &>", "python server.py &> log &", []cmd{{Args: []string{"python", "server.py"}, Redirects: []string{"log"}}}},
		{"empty", "   \n ", nil},
		{"unbalanced quote never panics", `echo "unterminated`, []cmd{{Args: []string{"echo", "unterminated"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []cmd
			for _, c := range sweParseShell(tt.in) {
				got = append(got, cmd{Args: c.Args, Redirects: c.Redirects, Heredoc: c.Heredoc, PipedIn: c.PipedIn})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sweParseShell(%q) =\n %+v\nwant\n %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseShellAppends(t *testing.T) {
	cs := sweParseShell("echo a > x && echo b >> y")
	if len(cs) != 2 || cs[0].Appends[0] || !cs[1].Appends[0] {
		t.Fatalf("sweParseShell appends = %+v, want > then >>", cs)
	}
}

func FuzzParseShell(f *testing.F) {
	for _, s := range []string{"cat <<'EOF' > a\nb\nEOF", `a "b\" c' | d && e`, "$(x (y) `z`", "2>&1 >&2 <<<x <y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sweParseShell(s) // must not panic or loop
		tr := newSWETracker(false)
		var st SWEStep
		tr.classifyShell(&st, s)
		if st.Class == "" {
			t.Errorf("classifyShell(%q) left no class", s)
		}
	})
}
