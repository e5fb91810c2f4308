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
// step the doc invents fails it.
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
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var called string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				called = fn.Name
			case *ast.SelectorExpr:
				called = fn.Sel.Name
			}
			if called != "" {
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
