import Glibc

/// The `--svg` chart, written directly as SVG: per query mix a panel of lookups per second
/// on one thread (log scale) against list size (log scale), one line per strategy, and a
/// panel of bytes per name against list size (docs/benchmarks.md#reading-the-chart).
public enum BenchChart {
    static let colours: [String: String] = [
        "trie": "#d62728", "naive": "#7f7f7f", "hashed-suffix": "#1f77b4", "sorted-reversed": "#2ca02c",
        "sqlite": "#9467bd",
    ]
    static let panelWidth = 400.0
    static let panelHeight = 300.0
    static let left = 70.0
    static let top = 72.0

    public static func svg(_ machine: BenchMachine, _ results: [BenchResult]) -> String {
        var mixes: [String] = []
        var strategies: [String] = []
        for r in results {
            if !mixes.contains(r.mix) { mixes.append(r.mix) }
            if !strategies.contains(r.strategy) { strategies.append(r.strategy) }
        }
        let sizes = Set(results.map(\.names)).sorted()
        let panels = mixes.count + 1
        let width = left + Double(panels) * (panelWidth + left) + 20
        let height = top + panelHeight + 120
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="24" font-size="16" font-weight="bold">phosra-gate bench matcher: \
            \(escape(machine.lists.joined(separator: ", "))), queries \(escape(machine.queries))</text>
            <text x="\(left)" y="42" fill="#444">Lookups per second on one thread (log scale, higher is better) \
            and resident bytes per listed name (lower is better), against list size. \(machine.cores) cores.</text>

            """
        let rates = results.map(\.lookupsPerSecond).filter { $0 > 0 && $0.isFinite }
        let low = pow(10, floor(log10(rates.min() ?? 1e4)))
        let high = pow(10, ceil(log10(rates.max() ?? 1e7)))
        for (index, mix) in mixes.enumerated() {
            let x0 = left + Double(index) * (panelWidth + left)
            out += panel(
                x0: x0, title: "mix \(mix): lookups/s, 1 thread", sizes: sizes, low: low, high: high, log: true,
                format: rateLabel, strategies: strategies,
                value: { strategy, size in
                    results.first { $0.strategy == strategy && $0.names == size && $0.mix == mix }?.lookupsPerSecond
                })
        }
        let bytes = results.map(\.bytesPerName).filter { $0.isFinite }
        let most = max(10, (bytes.max() ?? 100) * 1.1)
        let step = most > 200 ? 50.0 : most > 80 ? 20.0 : 10.0
        out += panel(
            x0: left + Double(mixes.count) * (panelWidth + left), title: "resident bytes per name", sizes: sizes,
            low: 0, high: ceil(most / step) * step, log: false, format: { "\(Int($0))" }, strategies: strategies,
            value: { strategy, size in
                results.first { $0.strategy == strategy && $0.names == size }?.bytesPerName
            })
        // Legend.
        var x = left
        let y = top + panelHeight + 80
        for strategy in strategies {
            let colour = colours[strategy] ?? "#000"
            out += "<line x1=\"\(x)\" y1=\"\(y - 4)\" x2=\"\(x + 24)\" y2=\"\(y - 4)\" stroke=\"\(colour)\" "
            out += "stroke-width=\"\(strategy == "trie" ? 4 : 2.5)\"/>"
            out += "<text x=\"\(x + 30)\" y=\"\(y)\">\(escape(strategy))</text>\n"
            x += 50 + Double(strategy.count) * 7.5
        }
        return out + "</svg>\n"
    }

    /// One panel with axes, grid, and a line per strategy.
    static func panel(
        x0: Double, title: String, sizes: [Int], low: Double, high: Double, log: Bool, format: (Double) -> String,
        strategies: [String], value: (String, Int) -> Double?
    ) -> String {
        let w = panelWidth
        let h = panelHeight
        func xAt(_ size: Int) -> Double {
            guard sizes.count > 1, let first = sizes.first, let last = sizes.last else { return x0 + w / 2 }
            return x0 + 20 + (w - 40) * (log10(Double(size)) - log10(Double(first)))
                / (log10(Double(last)) - log10(Double(first)))
        }
        func yAt(_ value: Double) -> Double {
            let fraction = log ? (log10(value) - log10(low)) / (log10(high) - log10(low)) : (value - low) / (high - low)
            return top + h - h * min(1, max(0, fraction))
        }
        var out = "<g>\n<text x=\"\(x0)\" y=\"\(top - 8)\" font-weight=\"bold\">\(escape(title))</text>\n"
        out += "<rect x=\"\(x0)\" y=\"\(top)\" width=\"\(w)\" height=\"\(h)\" fill=\"none\" stroke=\"#888\"/>\n"
        var ticks: [Double] = []
        if log {
            var tick = low
            while tick <= high * 1.0001 {
                ticks.append(tick)
                tick *= 10
            }
        } else {
            let step = (high - low) / 5
            ticks = (0...5).map { low + Double($0) * step }
        }
        for tick in ticks {
            let y = yAt(tick)
            out += "<line x1=\"\(x0)\" y1=\"\(y)\" x2=\"\(x0 + w)\" y2=\"\(y)\" stroke=\"#ddd\"/>"
            out += "<text x=\"\(x0 - 6)\" y=\"\(y + 4)\" text-anchor=\"end\">\(format(tick))</text>\n"
        }
        for size in sizes {
            let x = xAt(size)
            out += "<line x1=\"\(x)\" y1=\"\(top)\" x2=\"\(x)\" y2=\"\(top + h)\" stroke=\"#eee\"/>"
            out += "<text x=\"\(x)\" y=\"\(top + h + 16)\" text-anchor=\"middle\">\(sizeLabel(size))</text>\n"
        }
        out +=
            "<text x=\"\(x0 + w / 2)\" y=\"\(top + h + 34)\" text-anchor=\"middle\">listed names (log scale)</text>\n"
        for strategy in strategies {
            let points = sizes.compactMap { size in value(strategy, size).map { (xAt(size), yAt($0)) } }
            guard !points.isEmpty else { continue }
            let colour = colours[strategy] ?? "#000"
            let path = points.map { "\(fixed($0.0)),\(fixed($0.1))" }.joined(separator: " ")
            out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" "
            out += "stroke-width=\"\(strategy == "trie" ? 4 : 2.5)\"/>\n"
            for (x, y) in points {
                out += "<circle cx=\"\(fixed(x))\" cy=\"\(fixed(y))\" r=\"4\" fill=\"\(colour)\"/>"
            }
            out += "\n"
        }
        return out + "</g>\n"
    }

    static func fixed(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }

    static func rateLabel(_ value: Double) -> String {
        if value >= 1e6 { return "\(Int(value / 1e6))M/s" }
        if value >= 1e3 { return "\(Int(value / 1e3))k/s" }
        return "\(Int(value))/s"
    }

    static func sizeLabel(_ size: Int) -> String {
        if size >= 1_000_000, size % 1_000_000 == 0 { return "\(size / 1_000_000)M" }
        if size >= 1000, size % 1000 == 0 { return "\(size / 1000)k" }
        return "\(size)"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
