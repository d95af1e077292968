package grounding

import (
	"strings"
)

// This file is a small, forgiving reader of the shell commands SWE agents
// run (bash as written by mini-swe-agent, OpenHands' execute_bash and
// SWE-agent's fall-through commands). It is not a shell: it only splits a
// command line into simple commands with their words, redirections and
// here-document bodies, which is what step classification needs. Anything
// it does not understand becomes words, never an error.

// sweCommand is one simple command of a command line.
type sweCommand struct {
	Args []string // words after quote removal; leading VAR=value and wrappers dropped
	// Redirects are the files written with > or >> (never /dev/null or
	// &N); Inputs the files read with <.
	Redirects []string
	Appends   []bool // Appends[i]: Redirects[i] was opened with >>
	Inputs    []string
	// Heredoc is the body of a here-document (<<EOF ... EOF) fed to the
	// command, "" when none.
	Heredoc    string
	HasHeredoc bool
	// PipedIn is true when the command reads a pipe (it follows |).
	PipedIn bool
}

// name is the base name of the command word ("/usr/bin/python3" → "python3").
func (c sweCommand) name() string {
	if len(c.Args) == 0 {
		return ""
	}
	n := c.Args[0]
	if i := strings.LastIndexByte(n, '/'); i >= 0 && i < len(n)-1 {
		n = n[i+1:]
	}
	return n
}

// sweParseShell splits a command line into simple commands, in order. It
// understands ;, &&, ||, |, & and newlines as separators, single, double and
// $'…' quotes, backslash escapes and line continuations, $(…) and `…` (kept
// inside their word), ( ) and { } groups, comments, redirections and
// here-documents (<<EOF, <<'EOF', <<-EOF), whose bodies are attached to the
// command that opened them.
func sweParseShell(s string) []sweCommand {
	p := sweShellParser{src: s}
	p.run()
	return p.out
}

type swePendingHeredoc struct {
	delim string
	strip bool // <<- strips leading tabs
	cmd   int  // index into out of the command it feeds, -1 before it exists
}

type sweShellParser struct {
	src      string
	i        int
	out      []sweCommand
	cur      sweCommand
	word     strings.Builder
	inWord   bool
	pipedIn  bool
	pending  []swePendingHeredoc
	redirect string // "", ">", "<" or "<<", "<<-" waiting for its target word
	appendTo bool   // the pending > redirection is >>
}

func (p *sweShellParser) run() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\':
			if p.i+1 < len(p.src) && p.src[p.i+1] == '\n' {
				p.i += 2 // line continuation
				continue
			}
			if p.i+1 < len(p.src) {
				p.word.WriteByte(p.src[p.i+1])
				p.inWord = true
				p.i += 2
				continue
			}
			p.i++
		case c == '\'':
			end := strings.IndexByte(p.src[p.i+1:], '\'')
			if end < 0 {
				p.word.WriteString(p.src[p.i+1:])
				p.i = len(p.src)
			} else {
				p.word.WriteString(p.src[p.i+1 : p.i+1+end])
				p.i += end + 2
			}
			p.inWord = true
		case c == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '\'':
			p.i++
			end := p.i + 1
			for end < len(p.src) && p.src[end] != '\'' {
				if p.src[end] == '\\' {
					end++
				}
				end++
			}
			p.word.WriteString(sweUnescapeANSIC(p.src[p.i+1 : min(end, len(p.src))]))
			p.i = min(end+1, len(p.src))
			p.inWord = true
		case c == '"':
			p.i++
			for p.i < len(p.src) && p.src[p.i] != '"' {
				if p.src[p.i] == '\\' && p.i+1 < len(p.src) && strings.IndexByte("\"\\$`\n", p.src[p.i+1]) >= 0 {
					if p.src[p.i+1] != '\n' {
						p.word.WriteByte(p.src[p.i+1])
					}
					p.i += 2
					continue
				}
				if p.src[p.i] == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '(' {
					end := sweSkipParens(p.src, p.i+1)
					p.word.WriteString(p.src[p.i:end])
					p.i = end
					continue
				}
				p.word.WriteByte(p.src[p.i])
				p.i++
			}
			p.i++
			p.inWord = true
		case c == '`':
			end := strings.IndexByte(p.src[p.i+1:], '`')
			if end < 0 {
				end = len(p.src) - p.i - 1
			}
			p.word.WriteString(p.src[p.i:min(p.i+end+2, len(p.src))])
			p.i = min(p.i+end+2, len(p.src))
			p.inWord = true
		case c == '$' && p.i+1 < len(p.src) && p.src[p.i+1] == '(':
			end := sweSkipParens(p.src, p.i+1)
			p.word.WriteString(p.src[p.i:end])
			p.i = end
			p.inWord = true
		case c == '#' && !p.inWord:
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\t' || c == '\r':
			p.endWord()
			p.i++
		case c == '\n':
			p.endWord()
			p.endCommand(false)
			p.i++
			p.readHeredocs()
		case c == ';' || c == '(' || c == ')':
			p.endWord()
			p.endCommand(false)
			p.i++
		case c == '&':
			p.endWord()
			if p.i+1 < len(p.src) && p.src[p.i+1] == '>' { // &> file
				p.i += 2
				p.appendTo = p.i < len(p.src) && p.src[p.i] == '>'
				if p.appendTo {
					p.i++
				}
				p.redirect = ">"
				continue
			}
			p.endCommand(false)
			p.i++
			if p.i < len(p.src) && p.src[p.i] == '&' {
				p.i++
			}
		case c == '|':
			p.endWord()
			if p.i+1 < len(p.src) && p.src[p.i+1] == '|' {
				p.endCommand(false)
				p.i += 2
				continue
			}
			p.endCommand(true)
			p.i++
			if p.i < len(p.src) && p.src[p.i] == '&' {
				p.i++
			}
		case c == '>' || c == '<':
			p.redirection()
		default:
			p.word.WriteByte(c)
			p.inWord = true
			p.i++
		}
	}
	p.endWord()
	p.endCommand(false)
	// Here-documents whose body never started (no newline after the
	// command) have none.
}

// redirection reads a redirection operator at p.i. A file-descriptor number
// just before it ("2>") is dropped from the current word.
func (p *sweShellParser) redirection() {
	if p.inWord {
		w := p.word.String()
		if sweIsDigits(w) { // 2>file: the descriptor is not a word
			p.word.Reset()
			p.inWord = false
		} else {
			p.endWord()
		}
	}
	c := p.src[p.i]
	if c == '<' {
		switch {
		case strings.HasPrefix(p.src[p.i:], "<<<"):
			p.i += 3
			p.redirect = "<<<"
		case strings.HasPrefix(p.src[p.i:], "<<-"):
			p.i += 3
			p.redirect = "<<-"
		case strings.HasPrefix(p.src[p.i:], "<<"):
			p.i += 2
			p.redirect = "<<"
		default:
			p.i++
			p.redirect = "<"
		}
		return
	}
	p.i++
	p.appendTo = false
	if p.i < len(p.src) && p.src[p.i] == '>' {
		p.i++
		p.appendTo = true
	}
	if p.i < len(p.src) && p.src[p.i] == '|' {
		p.i++
	}
	if p.i < len(p.src) && p.src[p.i] == '&' { // >&2, 2>&1: a descriptor, not a file
		p.i++
		for p.i < len(p.src) && (p.src[p.i] >= '0' && p.src[p.i] <= '9' || p.src[p.i] == '-') {
			p.i++
		}
		return
	}
	p.redirect = ">"
}

func (p *sweShellParser) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	p.word.Reset()
	p.inWord = false
	switch p.redirect {
	case ">":
		if w != "/dev/null" && w != "/dev/stderr" && w != "/dev/stdout" {
			p.cur.Redirects = append(p.cur.Redirects, w)
			p.cur.Appends = append(p.cur.Appends, p.appendTo)
		}
	case "<":
		p.cur.Inputs = append(p.cur.Inputs, w)
	case "<<", "<<-":
		p.pending = append(p.pending, swePendingHeredoc{delim: w, strip: p.redirect == "<<-", cmd: -1})
		p.cur.HasHeredoc = true
	case "<<<":
		p.cur.Heredoc += w
		p.cur.HasHeredoc = true
	default:
		p.cur.Args = append(p.cur.Args, w)
	}
	p.redirect = ""
}

// endCommand closes the current simple command; piped says the next one
// reads its output.
func (p *sweShellParser) endCommand(piped bool) {
	c := p.cur
	p.cur = sweCommand{}
	c.PipedIn = p.pipedIn
	p.pipedIn = piped
	c.Args = sweStripWrappers(c.Args)
	if len(c.Args) == 0 && len(c.Redirects) == 0 && !c.HasHeredoc {
		return
	}
	p.out = append(p.out, c)
	for k := range p.pending {
		if p.pending[k].cmd < 0 {
			p.pending[k].cmd = len(p.out) - 1
		}
	}
}

// readHeredocs consumes, after a newline, the bodies of the pending
// here-documents in order. A body without its closing delimiter runs to the
// end of the input (agents forget it; the shell would too).
func (p *sweShellParser) readHeredocs() {
	for len(p.pending) > 0 {
		h := p.pending[0]
		p.pending = p.pending[1:]
		var body strings.Builder
		for p.i < len(p.src) {
			end := strings.IndexByte(p.src[p.i:], '\n')
			line := p.src[p.i:]
			next := len(p.src)
			if end >= 0 {
				line = p.src[p.i : p.i+end]
				next = p.i + end + 1
			}
			p.i = next
			check := strings.TrimRight(line, "\r")
			if h.strip {
				check = strings.TrimLeft(check, "\t")
			}
			if check == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		if h.cmd >= 0 && h.cmd < len(p.out) {
			p.out[h.cmd].Heredoc += body.String()
			p.out[h.cmd].HasHeredoc = true
		}
	}
}

// sweSkipParens returns the index just past the parenthesis group opening at
// s[i] == '(' (quotes inside are skipped).
func sweSkipParens(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '\'':
			if e := strings.IndexByte(s[i+1:], '\''); e >= 0 {
				i += e + 1
			}
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
		i++
	}
	return len(s)
}

func sweUnescapeANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\'`, "'", `\"`, `"`, `\\`, `\`)
	return r.Replace(s)
}

func sweIsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sweShellKeywords start a compound command; the command proper follows them.
var sweShellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "time": true,
}

// sweShellClosers end compound commands and carry no command.
var sweShellClosers = map[string]bool{"fi": true, "done": true, "esac": true, "}": true}

// sweStripWrappers drops what precedes the real command word: keywords (if,
// then, do, …), VAR=value assignments, and wrappers that run their
// arguments (sudo, env, timeout N, nohup, xargs, time, stdbuf, nice). A
// "for x in …" clause has no command and is dropped whole.
func sweStripWrappers(args []string) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case sweShellClosers[a]:
			args = args[1:]
		case sweShellKeywords[a]:
			args = args[1:]
		case a == "for" || a == "case" || a == "select":
			return nil
		case sweIsAssignment(a):
			args = args[1:]
		case a == "sudo" || a == "nohup" || a == "command" || a == "exec" || a == "builtin":
			args = args[1:]
		case a == "env":
			args = args[1:]
			for len(args) > 0 && (strings.HasPrefix(args[0], "-") || sweIsAssignment(args[0])) {
				args = args[1:]
			}
		case a == "timeout" || a == "nice" || a == "stdbuf" || a == "xargs":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			if a == "timeout" && len(args) > 0 {
				args = args[1:] // the duration
			}
		default:
			return args
		}
	}
	return args
}

func sweIsAssignment(a string) bool {
	eq := strings.IndexByte(a, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := a[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
