package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The chart is SVG written here and turned into a PNG by the browser the
// bench already runs (cmd/bench screenshots it), so no plotting library or
// font file is needed.

// series is one colour of a bar chart.
type series struct {
	Name  string
	Color string
}

// group is one row label with a value per series (NaN: no bar).
type group struct {
	Label  string
	Values []float64
}

// barChart is a horizontal grouped bar chart.
type barChart struct {
	Title  string
	Unit   string // shown after each value and on the axis
	Log    bool   // logarithmic axis (values spanning decades)
	Series []series
	Groups []group
}

const (
	chartWidth  = 1100
	labelWidth  = 260
	barHeight   = 14
	groupGap    = 10
	panelMargin = 30
)

var palette = []string{"#2563eb", "#f97316", "#16a34a", "#9333ea", "#dc2626", "#0891b2"}

// height is the panel's height in pixels.
func (c barChart) height() int {
	bars := len(c.Groups) * (len(c.Series)*barHeight + groupGap)
	return 60 + (c.legendRows()-1)*18 + bars + 30
}

// legendItem is where one series' key goes.
type legendItem struct {
	s      series
	x, row int
}

// legend lays the series' keys out left to right, wrapping before the
// right margin.
func (c barChart) legend() []legendItem {
	var out []legendItem
	x, row := labelWidth, 0
	for _, s := range c.Series {
		w := 24 + 7*len(s.Name)
		if x+w > chartWidth-20 && x > labelWidth {
			x, row = labelWidth, row+1
		}
		out = append(out, legendItem{s, x, row})
		x += w
	}
	return out
}

func (c barChart) legendRows() int {
	rows := 1
	for _, it := range c.legend() {
		rows = max(rows, it.row+1)
	}
	return rows
}

// svg draws the chart at vertical offset y.
func (c barChart) svg(b *strings.Builder, y int) {
	plotX, plotW := labelWidth, chartWidth-labelWidth-150
	lo, hi := math.Inf(1), 0.0
	for _, g := range c.Groups {
		for _, v := range g.Values {
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1, 1
	}
	var scale func(float64) float64
	var ticks []float64
	if c.Log {
		a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if z == a {
			z++
		}
		scale = func(v float64) float64 { return (math.Log10(v) - a) / (z - a) * float64(plotW) }
		for e := a; e <= z; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		step := niceStep(hi / 5)
		top := math.Ceil(hi/step) * step
		scale = func(v float64) float64 { return v / top * float64(plotW) }
		for t := 0.0; t <= top+step/2; t += step {
			ticks = append(ticks, t)
		}
	}
	fmt.Fprintf(b, `<text x="10" y="%d" class="title">%s</text>`, y+22, html.EscapeString(c.Title))
	for _, p := range c.legend() {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" class="legend">%s</text>`,
			p.x, y+32+p.row*18, p.s.Color, p.x+16, y+43+p.row*18, html.EscapeString(p.s.Name))
	}
	top := y + 55 + c.legendRows()*18 - 18
	cy := top
	for _, g := range c.Groups {
		gh := len(c.Series) * barHeight
		fmt.Fprintf(b, `<text x="%d" y="%d" class="label" text-anchor="end">%s</text>`, plotX-8, cy+gh/2+4, html.EscapeString(g.Label))
		for i, v := range g.Values {
			if i >= len(c.Series) || math.IsNaN(v) || v <= 0 {
				continue
			}
			w := math.Max(1, scale(v))
			if c.Log && v < ticks[0] {
				w = 1
			}
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/><text x="%.1f" y="%d" class="value">%s</text>`,
				plotX, cy+i*barHeight+1, w, barHeight-2, c.Series[i].Color, float64(plotX)+w+4, cy+i*barHeight+barHeight-3, html.EscapeString(num(v)+" "+c.Unit))
		}
		cy += gh + groupGap
	}
	for _, t := range ticks {
		x := float64(plotX) + scale(t)
		if t > 0 || !c.Log {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`,
				x, top-4, x, cy, x, cy+14, html.EscapeString(num(t)))
		}
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" class="tick">%s</text>`, plotX+plotW+40, cy+14, html.EscapeString(c.Unit+axisNote(c.Log)))
}

func axisNote(log bool) string {
	if log {
		return " (log scale)"
	}
	return ""
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// num prints a figure with about three significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

// chartPage is an HTML page holding the panels one below the other, sized
// to the SVG so a screenshot of the page is the chart.
func chartPage(title string, panels []barChart) string {
	h := 50
	for _, p := range panels {
		h += p.height() + panelMargin
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title><style>
html,body{margin:0;background:#fff}
svg{font-family:"DejaVu Sans",Arial,sans-serif;display:block}
.head{font-size:20px;font-weight:bold}.title{font-size:16px;font-weight:bold}
.legend,.label{font-size:12px}.value,.tick{font-size:11px;fill:#333}
.grid{stroke:#ddd;stroke-width:1}
</style></head><body><svg id="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`,
		html.EscapeString(title), chartWidth, h, chartWidth, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><text x="10" y="30" class="head">%s</text>`, chartWidth, h, html.EscapeString(title))
	y := 50
	for _, p := range panels {
		p.svg(&b, y)
		y += p.height() + panelMargin
	}
	b.WriteString(`</svg></body></html>`)
	return b.String()
}
