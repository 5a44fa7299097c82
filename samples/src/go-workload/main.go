// Command go-workload is the program profiled for samples/go-*.pb.gz.
//
// It is a small, deterministic "log analytics" batch job that uses only the
// Go standard library:
//
//  1. generate synthetic access-log lines (math/rand, fixed seed),
//  2. parse them with a regular expression (regexp),
//  3. aggregate them in maps (per path, per user, per status, word counts),
//  4. round-trip the records through JSON (encoding/json),
//  5. sort the records and the aggregates (sort),
//  6. compress and hash batches (compress/gzip, crypto/sha256),
//  7. solve N-queens and evaluate random expression trees (recursion),
//  8. fan work out to two goroutines over a channel.
//
// A CPU profile (runtime/pprof.StartCPUProfile) covers the whole run and a
// heap profile (runtime/pprof.WriteHeapProfile) is written at the end while
// the parsed records and the index are still live.
//
// Usage: go-workload -cpuprofile cpu.pb.gz -memprofile heap.pb.gz [-lines N]
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type Record struct {
	IP      string            `json:"ip"`
	User    string            `json:"user"`
	Time    string            `json:"time"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Status  int               `json:"status"`
	Bytes   int               `json:"bytes"`
	Latency float64           `json:"latency_ms"`
	Agent   string            `json:"agent"`
	Tags    []string          `json:"tags"`
	Extra   map[string]string `json:"extra,omitempty"`
}

var lineRE = regexp.MustCompile(
	`^(\d+\.\d+\.\d+\.\d+) - (\w+) \[([^\]]+)\] "(GET|POST|PUT|DELETE) ([^ "]+) HTTP/1\.[01]" (\d{3}) (\d+) ([\d.]+) "([^"]*)"$`)
var wordRE = regexp.MustCompile(`[a-z]+`)

var (
	methods = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	agents  = []string{
		"curl/8.4.0", "Mozilla/5.0 (X11; Linux x86_64) firefox", "python-requests/2.31",
		"Go-http-client/1.1", "Mozilla/5.0 (Macintosh) safari", "wget/1.21",
	}
	segments = []string{"api", "v1", "v2", "users", "orders", "items", "search", "static",
		"img", "cart", "checkout", "login", "logout", "admin", "reports", "export"}
	statuses = []int{200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 404, 500, 503}
)

// ------------------------------------------------------------ generation

func genLines(rng *rand.Rand, n int) []string {
	users := make([]string, 500)
	for i := range users {
		var sb strings.Builder
		for j := 0; j < 4+rng.Intn(6); j++ {
			sb.WriteByte(byte('a' + rng.Intn(26)))
		}
		users[i] = sb.String()
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	out := make([]string, n)
	for i := range out {
		depth := 1 + rng.Intn(4)
		parts := make([]string, depth)
		for d := range parts {
			parts[d] = segments[rng.Intn(len(segments))]
		}
		path := "/" + strings.Join(parts, "/")
		if rng.Intn(3) == 0 {
			path += "/" + strconv.Itoa(rng.Intn(10000))
		}
		ts := base.Add(time.Duration(i) * 137 * time.Millisecond).Format("02/Jan/2006:15:04:05 -0700")
		out[i] = fmt.Sprintf(`%d.%d.%d.%d - %s [%s] "%s %s HTTP/1.1" %d %d %.3f "%s"`,
			10, rng.Intn(256), rng.Intn(256), 1+rng.Intn(254),
			users[rng.Intn(len(users))], ts, methods[rng.Intn(len(methods))], path,
			statuses[rng.Intn(len(statuses))], rng.Intn(200000), rng.ExpFloat64()*40,
			agents[rng.Intn(len(agents))])
	}
	return out
}

// --------------------------------------------------------------- parsing

func parseLines(lines []string) []Record {
	recs := make([]Record, 0, len(lines))
	for _, ln := range lines {
		m := lineRE.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		status, _ := strconv.Atoi(m[6])
		nbytes, _ := strconv.Atoi(m[7])
		lat, _ := strconv.ParseFloat(m[8], 64)
		r := Record{IP: m[1], User: m[2], Time: m[3], Method: m[4], Path: m[5],
			Status: status, Bytes: nbytes, Latency: lat, Agent: m[9]}
		r.Tags = wordRE.FindAllString(strings.ToLower(m[9]), -1)
		if status >= 400 {
			r.Extra = map[string]string{"class": strconv.Itoa(status/100) + "xx", "path0": strings.Split(m[5], "/")[1]}
		}
		recs = append(recs, r)
	}
	return recs
}

// ----------------------------------------------------------- aggregation

type Agg struct {
	Key     string
	Count   int
	Bytes   int
	Latency float64
}

type Index struct {
	ByPath   map[string]*Agg
	ByUser   map[string]*Agg
	ByStatus map[int]int
	Words    map[string]int
	PathRecs map[string][]int
}

func buildIndex(recs []Record) *Index {
	ix := &Index{ByPath: map[string]*Agg{}, ByUser: map[string]*Agg{}, ByStatus: map[int]int{},
		Words: map[string]int{}, PathRecs: map[string][]int{}}
	for i := range recs {
		r := &recs[i]
		for _, m := range []struct {
			mp  map[string]*Agg
			key string
		}{{ix.ByPath, r.Path}, {ix.ByUser, r.User}} {
			a := m.mp[m.key]
			if a == nil {
				a = &Agg{Key: m.key}
				m.mp[m.key] = a
			}
			a.Count++
			a.Bytes += r.Bytes
			a.Latency += r.Latency
		}
		ix.ByStatus[r.Status]++
		for _, seg := range strings.Split(r.Path, "/") {
			if seg != "" {
				ix.Words[seg]++
			}
		}
		for _, t := range r.Tags {
			ix.Words[t]++
		}
		ix.PathRecs[r.Path] = append(ix.PathRecs[r.Path], i)
	}
	return ix
}

// ------------------------------------------------------------------ json

func jsonRoundTrip(recs []Record, rounds int) int {
	total := 0
	for k := 0; k < rounds; k++ {
		blob, err := json.Marshal(recs)
		if err != nil {
			log.Fatal(err)
		}
		var back []Record
		if err := json.Unmarshal(blob, &back); err != nil {
			log.Fatal(err)
		}
		total += len(back) + len(blob)%7
	}
	return total
}

// --------------------------------------------------------------- sorting

func sortAll(recs []Record, ix *Index) (string, string) {
	cp := make([]Record, len(recs))
	copy(cp, recs)
	sort.Slice(cp, func(i, j int) bool {
		if cp[i].Latency != cp[j].Latency {
			return cp[i].Latency > cp[j].Latency
		}
		return cp[i].Path < cp[j].Path
	})
	aggs := make([]*Agg, 0, len(ix.ByPath))
	for _, a := range ix.ByPath {
		aggs = append(aggs, a)
	}
	sort.SliceStable(aggs, func(i, j int) bool {
		if aggs[i].Count != aggs[j].Count {
			return aggs[i].Count > aggs[j].Count
		}
		return aggs[i].Key < aggs[j].Key
	})
	words := make([]string, 0, len(ix.Words))
	for w := range ix.Words {
		words = append(words, w)
	}
	sort.Strings(words)
	return cp[0].Path, aggs[0].Key
}

// ------------------------------------------------------ compress + hash

func compressBatches(lines []string, batch int) (int, string) {
	var total int
	h := sha256.New()
	for i := 0; i < len(lines); i += batch {
		end := i + batch
		if end > len(lines) {
			end = len(lines)
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		for _, ln := range lines[i:end] {
			zw.Write([]byte(ln))
			zw.Write([]byte{'\n'})
		}
		zw.Close()
		total += buf.Len()
		h.Write(buf.Bytes())
	}
	return total, hex.EncodeToString(h.Sum(nil))[:12]
}

// ------------------------------------------------------------- recursion

func queens(n, row int, cols, d1, d2 uint32) int {
	if row == n {
		return 1
	}
	count := 0
	for c := 0; c < n; c++ {
		if cols&(1<<c) != 0 || d1&(1<<(row+c)) != 0 || d2&(1<<(row-c+n-1)) != 0 {
			continue
		}
		count += queens(n, row+1, cols|1<<c, d1|1<<(row+c), d2|1<<(row-c+n-1))
	}
	return count
}

type Expr interface {
	Eval(env map[string]float64) float64
}
type Num float64
type Var string
type Bin struct {
	Op   byte
	L, R Expr
}

func (n Num) Eval(map[string]float64) float64     { return float64(n) }
func (v Var) Eval(env map[string]float64) float64 { return env[string(v)] }
func (b *Bin) Eval(env map[string]float64) float64 {
	l, r := b.L.Eval(env), b.R.Eval(env)
	switch b.Op {
	case '+':
		return l + r
	case '-':
		return l - r
	case '*':
		return l * r
	default:
		if r == 0 {
			return l
		}
		return l / r
	}
}

func randExpr(rng *rand.Rand, depth int) Expr {
	if depth == 0 || rng.Intn(5) == 0 {
		if rng.Intn(2) == 0 {
			return Num(rng.Intn(10) + 1)
		}
		return Var([]string{"x", "y", "z"}[rng.Intn(3)])
	}
	return &Bin{Op: "+-*/"[rng.Intn(4)], L: randExpr(rng, depth-1), R: randExpr(rng, depth-1)}
}

func evalTrees(rng *rand.Rand, trees, evals int) float64 {
	sum := 0.0
	for t := 0; t < trees; t++ {
		e := randExpr(rng, 12)
		for k := 0; k < evals; k++ {
			sum += e.Eval(map[string]float64{"x": float64(k), "y": 2, "z": float64(t)})
		}
	}
	return sum
}

// ------------------------------------------------------------ goroutines

func parallelParse(lines []string, workers int) int {
	jobs := make(chan []string)
	results := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range jobs {
				results <- len(buildIndex(parseLines(chunk)).ByPath)
			}
		}()
	}
	go func() {
		for i := 0; i < len(lines); i += 2000 {
			end := i + 2000
			if end > len(lines) {
				end = len(lines)
			}
			jobs <- lines[i:end]
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	total := 0
	for n := range results {
		total += n
	}
	return total
}

// ------------------------------------------------------------------ main

func main() {
	cpuOut := flag.String("cpuprofile", "", "write CPU profile to this file")
	memOut := flag.String("memprofile", "", "write heap profile to this file")
	nLines := flag.Int("lines", 60000, "number of log lines to generate")
	flag.Parse()

	if *memOut != "" {
		runtime.MemProfileRate = 64 * 1024 // sample more often than the 512 KiB default
	}
	if *cpuOut != "" {
		f, err := os.Create(*cpuOut)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	start := time.Now()
	rng := rand.New(rand.NewSource(42))
	lines := genLines(rng, *nLines)
	recs := parseLines(lines)
	ix := buildIndex(recs)
	nJSON := jsonRoundTrip(recs[:len(recs)/3], 3)
	slowest, topPath := sortAll(recs, ix)
	zBytes, digest := compressBatches(lines, 1000)
	nq := queens(10, 0, 0, 0, 0)
	ev := evalTrees(rng, 40, 300)
	par := parallelParse(lines, 2)

	fmt.Printf("lines=%d recs=%d paths=%d users=%d words=%d json=%d slowest=%s top=%s gz=%d sha=%s queens=%d eval=%.1f par=%d elapsed=%s\n",
		len(lines), len(recs), len(ix.ByPath), len(ix.ByUser), len(ix.Words), nJSON, slowest, topPath,
		zBytes, digest, nq, ev, par, time.Since(start).Round(time.Millisecond))

	if *memOut != "" {
		f, err := os.Create(*memOut)
		if err != nil {
			log.Fatal(err)
		}
		runtime.GC() // get up-to-date in-use statistics
		if err := pprof.WriteHeapProfile(f); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
	runtime.KeepAlive(recs)
	runtime.KeepAlive(ix)
}
