//! Server-side charts: plotters to SVG strings. No fonts are loaded — text is SVG `<text>` in a
//! generic family the browser resolves — and colours follow the page theme.

use plotters::prelude::*;

/// What the y axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Plain numbers (GPU units, pods).
    Count,
    /// Bytes, labelled in binary units.
    Bytes,
    /// Seconds, labelled as durations.
    Seconds,
    /// Percent, 0 to 100.
    Percent,
}

/// One line of a chart, already split into segments (gaps between them).
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend label.
    pub label: String,
    /// Colour index into the palette.
    pub color: usize,
    /// Drawable segments.
    pub segments: Vec<Vec<(i64, f64)>>,
}

struct Palette {
    bg: RGBColor,
    fg: RGBColor,
    grid: RGBColor,
    gap: RGBColor,
    lines: [RGBColor; 5],
}

/// How a chart is drawn: dark or light, in which language, and in which time zone.
#[derive(Debug, Clone)]
pub struct Look {
    /// Dark theme.
    pub dark: bool,
    /// Language of its labels.
    pub lang: app::i18n::Lang,
    /// The zone of its time axis (the reader's; UTC by default), named in its caption.
    pub tz: jiff::tz::TimeZone,
}

impl Default for Look {
    fn default() -> Self {
        Self::from(false)
    }
}

impl From<bool> for Look {
    fn from(dark: bool) -> Self {
        Self { dark, lang: app::i18n::Lang::En, tz: jiff::tz::TimeZone::UTC }
    }
}

impl Look {
    /// The caption: the title and the zone its times are in (`… · JST`).
    fn caption(&self, title: &str, from: i64, to: i64) -> String {
        let at = |t: i64| {
            let ts = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            self.tz.to_offset_info(ts).abbreviation().to_string()
        };
        let (a, b) = (at(from), at(to));
        if a == b {
            format!("{title} · {a}")
        } else {
            format!("{title} · {a}/{b}")
        }
    }
}

fn palette(dark: bool) -> Palette {
    if dark {
        Palette {
            bg: RGBColor(0x17, 0x1b, 0x22),
            fg: RGBColor(0xee, 0xf1, 0xf5),
            grid: RGBColor(0x2c, 0x33, 0x3d),
            gap: RGBColor(0x3d, 0x12, 0x16),
            // Okabe–Ito colours (told apart with the common colour-vision deficiencies),
            // the lighter ones on the dark background.
            lines: [
                RGBColor(0x56, 0xb4, 0xe9),
                RGBColor(0xe6, 0x9f, 0x00),
                RGBColor(0x00, 0xc0, 0x8b),
                RGBColor(0xf0, 0xe4, 0x42),
                RGBColor(0xcc, 0x79, 0xa7),
            ],
        }
    } else {
        Palette {
            bg: RGBColor(0xff, 0xff, 0xff),
            fg: RGBColor(0x15, 0x18, 0x1d),
            grid: RGBColor(0xe3, 0xe7, 0xec),
            gap: RGBColor(0xfd, 0xe7, 0xe8),
            lines: [
                RGBColor(0x00, 0x72, 0xb2),
                RGBColor(0xd5, 0x5e, 0x00),
                RGBColor(0x00, 0x9e, 0x73),
                RGBColor(0x7a, 0x5c, 0x00),
                RGBColor(0xcc, 0x79, 0xa7),
            ],
        }
    }
}

/// A gap's recorded reason in the reader's language. The reasons are a fixed set written by
/// gpudash (and by the fleet), so what is stored is read as their code; one not known here is
/// shown as it is.
pub fn gap_reason(stored: &str, lang: app::i18n::Lang) -> String {
    let s = lang.s();
    match stored {
        "gpudash not running" => s.gap_not_running.into(),
        "cluster watch stale" => s.gap_watch_stale.into(),
        "site not live (stale or unreachable)" => s.gap_site_not_live.into(),
        other => other.into(),
    }
}

fn fmt_time(t: i64, span: i64, tz: &jiff::tz::TimeZone) -> String {
    let ts = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH).to_zoned(tz.clone());
    if span <= 2 * 86_400 {
        ts.strftime("%H:%M").to_string()
    } else {
        ts.strftime("%m-%d").to_string()
    }
}

fn fmt_y(v: f64, unit: Unit, lang: app::i18n::Lang) -> String {
    match unit {
        Unit::Count => {
            if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        }
        Unit::Bytes => app::units::bytes(v.max(0.0) as u64),
        Unit::Seconds => app::i18n::duration(v as i64, lang),
        Unit::Percent => format!("{v:.0}%"),
    }
}

/// The dash of each series (by palette index), so that series stay apart in greyscale and for
/// readers who cannot tell the colours apart: solid, long dashes, dots, dash-dot, short dashes.
const DASHES: [&str; 5] = ["", "9 4", "2 3", "9 3 2 3", "5 3"];

/// plotters could not draw a chart.
#[derive(Debug, thiserror::Error)]
#[error("drawing the chart: {0}")]
pub struct DrawError(String);

fn draw<E: std::fmt::Display>(e: E) -> DrawError {
    DrawError(e.to_string())
}

/// Gives each series' strokes its dash: plotters' SVG backend writes one `stroke="#rrggbb"` per
/// line and legend entry, and the colours of a chart's series are distinct.
fn dash_series(svg: String, colors: &[RGBColor]) -> String {
    let mut out = svg;
    for (i, c) in colors.iter().enumerate() {
        let dash = DASHES[i % DASHES.len()];
        if dash.is_empty() {
            continue;
        }
        for hex in [format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2), format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)] {
            let from = format!("stroke=\"{hex}\"");
            out = out.replace(&from, &format!("{from} stroke-dasharray=\"{dash}\""));
        }
    }
    out
}

/// XML 1.0 allows no control characters but tab and line ends; a title from the query string
/// (`?node=%00%1b`) could carry some, and the SVG would not load. Each becomes U+FFFD.
fn xml_safe(svg: String) -> String {
    if svg.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) {
        svg.chars().map(|c| if c.is_control() && !matches!(c, '\t' | '\n' | '\r') { '\u{fffd}' } else { c }).collect()
    } else {
        svg
    }
}

/// Renders a line chart. Gaps are shaded and labelled, and no line crosses them.
#[allow(clippy::too_many_arguments)]
pub fn line_chart(
    title: &str,
    unit: Unit,
    lines: &[Line],
    gaps: &[(i64, i64, String)],
    from: i64,
    to: i64,
    look: impl Into<Look>,
    size: (u32, u32),
) -> Result<String, DrawError> {
    let look = look.into();
    let p = palette(look.dark);
    let (ymax, y_labels) = y_axis(lines, unit);
    let to = to.max(from + 1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&p.bg).map_err(draw)?;
        let font = |s: u32| ("sans-serif", s).into_font().color(&p.fg);
        let mut chart = ChartBuilder::on(&root)
            .caption(look.caption(title, from, to), font(22))
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(if unit == Unit::Count { 50 } else { 90 })
            .build_cartesian_2d(from..to, 0f64..ymax)
            .map_err(draw)?;
        let span = to - from;
        chart
            .configure_mesh()
            .x_labels(7)
            .y_labels(y_labels)
            .x_label_formatter(&|t| fmt_time(*t, span, &look.tz))
            .y_label_formatter(&|v| fmt_y(*v, unit, look.lang))
            .label_style(font(16))
            .axis_style(p.fg)
            .bold_line_style(p.grid)
            .light_line_style(p.bg)
            .draw()
            .map_err(draw)?;
        for (s, e, reason) in gaps {
            chart
                .draw_series(std::iter::once(Rectangle::new([(*s, 0.0), (*e, ymax)], p.gap.filled())))
                .map_err(draw)?;
            if e - s > span / 30 {
                let label = app::i18n::fill(look.lang.s().chart_no_data, &[&gap_reason(reason, look.lang)]);
                chart.draw_series(std::iter::once(Text::new(label, (*s, ymax * 0.95), font(11)))).map_err(draw)?;
            }
        }
        for l in lines {
            let color = p.lines[l.color % p.lines.len()];
            let mut first = true;
            for seg in &l.segments {
                let s = chart.draw_series(LineSeries::new(seg.iter().copied(), color.stroke_width(2))).map_err(draw)?;
                if first {
                    s.label(l.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
                    first = false;
                }
            }
        }
        if lines.iter().any(|l| !l.segments.is_empty()) {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(p.bg.mix(0.85))
                .border_style(p.grid)
                .label_font(font(16))
                .draw()
                .map_err(draw)?;
        }
        root.present().map_err(draw)?;
    }
    let used: Vec<RGBColor> =
        (0..lines.iter().map(|l| l.color + 1).max().unwrap_or(0)).map(|i| p.lines[i % p.lines.len()]).collect();
    Ok(xml_safe(dash_series(svg, &used)))
}

/// The top of the y axis (a little above the highest point; 100 % for percentages; a whole
/// number for counts, so that the ticks — steps of 1, 2, 5, … — are whole) and how many ticks.
fn y_axis(lines: &[Line], unit: Unit) -> (f64, usize) {
    let ymax = lines.iter().flat_map(|l| l.segments.iter().flatten()).map(|(_, v)| *v).fold(0.0f64, f64::max);
    let ymax = match (ymax <= 0.0, unit) {
        (_, Unit::Percent) => 100.0,
        (true, Unit::Seconds) => 60.0,
        (true, Unit::Bytes) => 1024.0 * 1024.0 * 1024.0,
        (true, Unit::Count) => 1.0,
        (false, Unit::Count) => (ymax * 1.15).ceil().max(1.0),
        (false, _) => ymax * 1.15,
    };
    (ymax, if unit == Unit::Count { (ymax as usize + 1).min(6) } else { 6 })
}

/// Reduces a segment to at most four points per pixel column (first, min, max, last), so that a
/// 30-day chart draws thousands of points, not hundreds of thousands, and looks the same.
pub fn decimate(seg: &[(i64, f64)], from: i64, to: i64, columns: i64) -> Vec<(i64, f64)> {
    if seg.len() <= (columns * 4) as usize {
        return seg.to_vec();
    }
    let width = ((to - from) / columns.max(1)).max(1);
    let mut out = Vec::with_capacity((columns * 4) as usize);
    let mut i = 0;
    while i < seg.len() {
        let col = (seg[i].0 - from).div_euclid(width);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < seg.len() && (seg[j].0 - from).div_euclid(width) == col {
            if seg[j].1 < seg[lo].1 {
                lo = j;
            }
            if seg[j].1 > seg[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut idx = vec![i, lo, hi, j - 1];
        idx.sort_unstable();
        idx.dedup();
        out.extend(idx.into_iter().map(|k| seg[k]));
        i = j;
    }
    out
}

/// One bar of a [`timeline`]: from `start` to `end` (still going: the chart's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// Unix seconds.
    pub start: i64,
    /// Unix seconds; `None` while it lasts.
    pub end: Option<i64>,
    /// Pending (the upper row) or running (the lower).
    pub pending: bool,
}

/// Pending and running intervals as bars on two rows, titled `title`, gaps shaded.
pub fn timeline(
    title: &str,
    (bars, marks): (&[Bar], &[(i64, String)]),
    gaps: &[(i64, i64, String)],
    from: i64,
    to: i64,
    look: impl Into<Look>,
) -> Result<String, DrawError> {
    let look = look.into();
    let s = look.lang.s();
    let p = palette(look.dark);
    let to = to.max(from + 1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 200)).into_drawing_area();
        root.fill(&p.bg).map_err(draw)?;
        let font = |s: u32| ("sans-serif", s).into_font().color(&p.fg);
        let mut chart = ChartBuilder::on(&root)
            .caption(look.caption(title, from, to), font(22))
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(80)
            .build_cartesian_2d(from..to, 0f64..2f64)
            .map_err(draw)?;
        let span = to - from;
        chart
            .configure_mesh()
            .x_labels(7)
            .y_labels(3)
            .y_label_formatter(&|v| match *v as i64 {
                0 => s.chart_running.into(),
                1 => s.chart_pending.into(),
                _ => String::new(),
            })
            .x_label_formatter(&|t| fmt_time(*t, span, &look.tz))
            .label_style(font(16))
            .axis_style(p.fg)
            .bold_line_style(p.grid)
            .light_line_style(p.bg)
            .draw()
            .map_err(draw)?;
        for (s, e, _) in gaps {
            chart.draw_series(std::iter::once(Rectangle::new([(*s, 0.0), (*e, 2.0)], p.gap.filled()))).map_err(draw)?;
        }
        for iv in bars {
            let (row, color) = if iv.pending { (1.0, p.lines[2]) } else { (0.0, p.lines[0]) };
            let end = iv.end.unwrap_or(to).min(to);
            let start = iv.start.max(from);
            chart
                .draw_series(std::iter::once(Rectangle::new([(start, row + 0.2), (end, row + 0.8)], color.filled())))
                .map_err(draw)?;
        }
        // What happened to the pod (a diagnosis raised: OOM-killed, preempted, evicted…): a
        // line at the time with the code beside it.
        for (t, code) in marks.iter().filter(|(t, _)| (from..=to).contains(t)) {
            let line = PathElement::new(vec![(*t, 0.0), (*t, 2.0)], p.lines[1].stroke_width(2));
            chart.draw_series(std::iter::once(line)).map_err(draw)?;
            let label = Text::new(code.clone(), (*t, 1.95), font(13));
            chart.draw_series(std::iter::once(label)).map_err(draw)?;
        }
        root.present().map_err(draw)?;
    }
    Ok(xml_safe(svg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_a_title_leave_valid_xml() {
        let svg = line_chart("n\u{0}\u{1b}x · <b>", Unit::Count, &[], &[], 0, 60, false, (300, 120)).unwrap();
        assert!(!svg.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')), "{svg}");
        assert!(svg.contains("n\u{fffd}\u{fffd}x"), "{svg}");
    }

    #[test]
    fn charts_have_axes_series_and_shaded_gaps() {
        let lines = vec![
            Line {
                label: "allocated".into(),
                color: 0,
                segments: vec![vec![(0, 1.0), (100, 1.0)], vec![(200, 3.0), (300, 3.0)]],
            },
            Line { label: "capacity <4>".into(), color: 1, segments: vec![vec![(0, 4.0), (300, 4.0)]] },
        ];
        let gaps = vec![(100, 200, "gpudash not running".to_string())];
        let svg = line_chart("orin-agx-01 <b>nvidia.com/gpu</b>", Unit::Count, &lines, &gaps, 0, 300, true, (900, 320))
            .unwrap_or_default();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("allocated") && svg.contains("no data (gpudash not running)"));
        // Three line segments: allocated twice (split by the gap) and capacity once.
        assert_eq!(svg.matches(r#"stroke-width="2" points"#).count(), 3, "three segments:\n{svg}");
        assert_eq!(svg.matches(r#"stroke-width="3" points"#).count(), 2, "two legend marks:\n{svg}");
        assert!(!svg.contains("<b>") && svg.contains("&lt;b&gt;"), "text must be escaped");
        assert!(svg.contains("00:0"), "time axis labels");
        // Series told apart by dash as well as colour; counts get whole-number ticks only.
        assert!(svg.contains(r#"stroke-dasharray="9 4""#), "the second series is dashed");
        assert_eq!(svg.matches("stroke-dasharray").count(), 2, "its line and its legend mark:\n{svg}");
        assert!(svg.contains("\n4\n") && svg.contains("\n1\n"), "integer ticks:\n{svg}");
        for frac in ["\n0.5\n", "\n1.5\n", "\n0.2\n", "\n0.4\n"] {
            assert!(!svg.contains(frac), "fractional tick {frac:?}:\n{svg}");
        }
    }

    #[test]
    fn decimation_keeps_extremes_and_bounds_the_point_count() {
        let seg: Vec<(i64, f64)> = (0..100_000).map(|t| (t, if t == 50_123 { 99.0 } else { (t % 7) as f64 })).collect();
        let d = decimate(&seg, 0, 100_000, 900);
        assert!(d.len() <= 3600, "{}", d.len());
        assert!(d.contains(&(50_123, 99.0)), "the spike survives");
        assert_eq!(d.first(), seg.first());
        assert_eq!(d.last(), seg.last());
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}
