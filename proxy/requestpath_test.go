package proxy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRequestPathDocMatchesTheCode keeps docs/architecture.md's request
// path, the one description of it (main.go and proxy.go point there), true:
// every step it names by a function's name (the word after ▼ or ─▶, such
// as operation.ResolveTarget or Authenticator.Verify, unless it begins prose) is a function that
// serveS3 reaches, and the steps come in the order serveS3 reaches them.
// A renamed function, a step moved in the code and not in the doc, or a
// step the doc invents fails it; so does a step serveS3 takes that the
// diagram does not name (TestRequestPathDocNamesEveryStep).
func TestRequestPathDocMatchesTheCode(t *testing.T) {
	bodies := functionBodies(t, ".")
	steps := requestPathSteps(t, "../docs/architecture.md")
	if len(steps) < 8 {
		t.Fatalf("found only %d named steps in the request path (%v): has the section's format changed?", len(steps), steps)
	}
	isStep := map[string]bool{}
	for _, step := range steps {
		isStep[step.name[strings.LastIndex(step.name, ".")+1:]] = true
	}
	position := map[string]int{}
	for i, name := range callOrder(bodies, "serveS3", isStep) {
		if _, seen := position[name]; !seen {
			position[name] = i
		}
	}
	// The main line (▼) comes in order; a branch (─▶) is taken after the
	// main-line step above it.
	last, lastStep := -1, ""
	for _, step := range steps {
		name := step.name[strings.LastIndex(step.name, ".")+1:]
		at, ok := position[name]
		if !ok {
			t.Errorf("the request path names %s, which serveS3 never reaches", step.name)
			continue
		}
		if at < last {
			t.Errorf("the request path puts %s after %s, but serveS3 reaches it first", step.name, lastStep)
		}
		if step.main {
			last, lastStep = at, step.name
		}
	}
}

// unnamedSteps are the calls of serveS3 the request path leaves out on
// purpose, each with the reason: bookkeeping around the steps, not a step
// a request passes or is refused at.
var unnamedSteps = map[string]string{
	"newCall":              "builds the call value every step fills",
	"set":                  "records the access log's fields (requestInfo.set)",
	"Refused":              "reads the connection cap's verdict, which the listener (internal/frontconn) made",
	"Context":              "the request's context, where that verdict is kept",
	"Newf":                 "builds the connection cap's 503 SlowDown",
	"Header":               "the response's header map, for Connection: close",
	"Set":                  "sets Connection: close on a refused connection's answer",
	"fail":                 "every step's error answer (s3err), drawn as the steps' refusals",
	"leaveUnauthenticated": "gives back enterUnauthenticated's slot",
	"limitBodyIdle":        "the body idle timeout, a bound on the verifying body read (timeouts.go)",
	"Authenticated":        "tells the connection cap the connection authenticated (internal/frontconn)",
	"aclBody":              "an ACL's body with the client's identity renamed, part of checkConfiguration's story (aclidentity.go)",
}

// mainLine is serveS3 and the function its main line continues in (split
// for length): the calls of each are checked as serveS3's own, so a step
// added to the continuation is not hidden behind it.
var mainLine = []string{"serveS3", "serveVerified"}

// TestRequestPathDocNamesEveryStep: every call serveS3 makes is a step the
// diagram names, or reaches one (route's and admit's steps are drawn one
// by one), or is in unnamedSteps with its reason. A step added to serveS3
// and not to the doc fails it.
func TestRequestPathDocNamesEveryStep(t *testing.T) {
	bodies := functionBodies(t, ".")
	isStep := map[string]bool{}
	for _, step := range requestPathSteps(t, "../docs/architecture.md") {
		isStep[step.name[strings.LastIndex(step.name, ".")+1:]] = true
	}
	direct := map[string]bool{}
	for _, fn := range mainLine {
		for _, name := range directCalls(bodies[fn]) {
			direct[name] = true
		}
	}
	for _, fn := range mainLine[1:] {
		delete(direct, fn) // its calls stand for it
	}
	for name := range direct {
		if isStep[name] || unnamedSteps[name] != "" || reachesStep(bodies, name, isStep) {
			continue
		}
		t.Errorf("serveS3 calls %s, which the request path neither names nor reaches through a named step, and unnamedSteps does not list", name)
	}
	for name := range unnamedSteps {
		if !direct[name] {
			t.Errorf("unnamedSteps lists %s, which serveS3 does not call", name)
		}
		if isStep[name] {
			t.Errorf("unnamedSteps lists %s, which the request path names", name)
		}
	}
}

// directCalls names the calls in body, in source order.
func directCalls(body *ast.BlockStmt) []string {
	var names []string
	ast.Inspect(body, func(n ast.Node) bool {
		if name := calledName(n); name != "" {
			names = append(names, name)
		}
		return true
	})
	return names
}

// reachesStep reports whether fn, one of the package's functions, reaches a
// step of the diagram.
func reachesStep(bodies map[string]*ast.BlockStmt, fn string, isStep map[string]bool) bool {
	for _, name := range callOrder(bodies, fn, isStep) {
		if isStep[name] {
			return true
		}
	}
	return false
}

// calledName is the name of the function or method n calls, or "" when n
// is no call.
func calledName(n ast.Node) string {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

type pathStep struct {
	name string
	main bool // a ▼ step of the main line, not a ─▶ branch
}

var stepName = regexp.MustCompile(`(▼|─▶)\s+([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)?)`)

// proseSteps are the words after ▼ or ─▶ in the diagram that begin a
// description, not a function's name. Any other word there names a
// function, so a renamed one cannot pass for prose.
var proseSteps = map[string]bool{"proxy": true, "backend": true, "every": true}

// requestPathSteps returns the function names of the request path's
// diagram, in order.
func requestPathSteps(t *testing.T, path string) []pathStep {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## The request path\n")
	if !ok {
		t.Fatalf("%s has no request path section", path)
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var steps []pathStep
	for _, m := range stepName.FindAllStringSubmatch(block, -1) {
		if !proseSteps[m[2]] {
			steps = append(steps, pathStep{name: m[2], main: m[1] == "▼"})
		}
	}
	return steps
}

// functionBodies parses the package in dir: its functions' and methods'
// bodies by name.
func functionBodies(t *testing.T, dir string) map[string]*ast.BlockStmt {
	t.Helper()
	fset := token.NewFileSet()
	bodies := map[string]*ast.BlockStmt{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, dir+"/"+e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				bodies[fn.Name.Name] = fn.Body
			}
		}
	}
	return bodies
}

// callOrder returns the names of the functions and methods called from
// root, depth first in source order, through the package's own functions
// (each entered once): the order a request meets them. It does not enter
// a step of the diagram: what happens inside one is that step's own story.
func callOrder(bodies map[string]*ast.BlockStmt, root string, isStep map[string]bool) []string {
	var order []string
	entered := map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		body, ok := bodies[name]
		if !ok || entered[name] {
			return
		}
		entered[name] = true
		ast.Inspect(body, func(n ast.Node) bool {
			if called := calledName(n); called != "" {
				order = append(order, called)
				if !isStep[called] {
					walk(called)
				}
			}
			return true
		})
	}
	walk(root)
	return order
}
