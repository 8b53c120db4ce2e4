import Foundation
import MatcherBench
import TestSupport
import Testing

/// The `--svg` chart drawn by a real browser: headless Chromium paints it on a canvas and
/// counts the pixels that are not white (docs/benchmarks.md#reading-the-chart).
@Suite struct ChartTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static func results() -> (BenchMachine, [BenchResult]) {
        let machine = BenchMachine(
            cores: 2, threads: 2, seconds: 1, lists: ["big.txt"], queries: "top-sites.txt", seed: 1,
            synthetic: [10_000: 0, 100_000: 0, 1_000_000: 0])
        var results: [BenchResult] = []
        let speeds = ["trie": 8e6, "naive": 8e5, "hashed-suffix": 3e6, "sorted-reversed": 1.5e6, "sqlite": 1e5]
        for (strategy, speed) in speeds.sorted(by: { $0.value > $1.value }) {
            for (step, size) in [10_000, 100_000, 1_000_000].enumerated() {
                for mix in ["popular", "hostile"] {
                    let rate = speed / Double(1 + step) / (mix == "hostile" ? 3 : 1)
                    results.append(
                        BenchResult(
                            strategy: strategy, names: size, mix: mix, queries: 1000, lookupsPerSecond: rate,
                            lookupsPerSecondThreads: rate * 1.8, p50: 1e9 / rate, p99: 3e9 / rate, p999: 9e9 / rate,
                            bytesPerName: 20 + Double(step) * 5 + speed / 1e6, buildSeconds: 0.1, loadSeconds: nil,
                            hits: 100))
                }
            }
        }
        return (machine, results)
    }

    /// Non-white pixels of `svg` painted on an 8-bit canvas by Chromium.
    static func paintedPixels(_ svg: String, scratch: ScratchDirectory) throws -> Int {
        let data = Data(svg.utf8).base64EncodedString()
        let page = try scratch.write(
            "page.html",
            """
            <!doctype html><html><body><canvas id="c" width="1400" height="500"></canvas><script>
            const image = new Image();
            image.onload = () => {
              const context = document.getElementById("c").getContext("2d");
              context.fillStyle = "white"; context.fillRect(0, 0, 1400, 500);
              context.drawImage(image, 0, 0);
              const pixels = context.getImageData(0, 0, 1400, 500).data;
              let painted = 0;
              for (let i = 0; i < pixels.length; i += 4) {
                if (pixels[i] < 240 || pixels[i + 1] < 240 || pixels[i + 2] < 240) painted++;
              }
              document.body.setAttribute("data-painted", String(painted));
            };
            image.onerror = () => document.body.setAttribute("data-painted", "error");
            image.src = "data:image/svg+xml;base64,\(data)";
            </script></body></html>
            """)
        let output = try Program.run(
            chromium!,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                "--user-data-dir=\(scratch.path("profile"))", "--dump-dom", "file://\(page)",
            ])
        let marker = "data-painted=\""
        guard let range = output.stdout.range(of: marker) else {
            Issue.record("no count in Chromium's DOM: \(output.stdout.prefix(300)) \(output.stderr.suffix(300))")
            return -1
        }
        let value = output.stdout[range.upperBound...].prefix { $0 != "\"" }
        #expect(value != "error", "Chromium could not decode the SVG")
        return Int(value) ?? -1
    }

    @Test(.enabled(if: chromium != nil, "needs Chromium"))
    func theChartIsDrawnAndNotBlank() throws {
        let scratch = try ScratchDirectory()
        let (machine, results) = Self.results()
        let svg = BenchChart.svg(machine, results)
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
        for label in [
            "trie", "naive", "hashed-suffix", "sorted-reversed", "sqlite", "mix popular", "mix hostile",
            "bytes per name", "listed names", "1M/s", "100k", "1M",
        ] {
            #expect(svg.contains(label), "\(label)")
        }
        let painted = try Self.paintedPixels(svg, scratch: scratch)
        // Axes, grid, labels and five lines on three panels: several percent of the canvas.
        #expect(painted > 15_000, "\(painted) painted pixels")
        let blank = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1400\" height=\"500\"></svg>"
        #expect(try Self.paintedPixels(blank, scratch: scratch) == 0, "the count sees a blank picture as blank")
    }

    @Test func jsonAndCsvHoldTheFieldsOfEveryResult() throws {
        let (machine, results) = Self.results()
        let json = BenchOutput.json(machine, results)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let head = try #require(object["machine"] as? [String: Any])
        #expect(head["cores"] as? Int == 2 && head["lists"] as? [String] == ["big.txt"])
        #expect(head["queries"] as? String == "top-sites.txt")
        let rows = try #require(object["results"] as? [[String: Any]])
        #expect(rows.count == results.count)
        let fields: Set<String> = [
            "strategy", "names", "mix", "lookups_per_second", "lookups_per_second_threads", "p50_ns", "p99_ns",
            "p999_ns", "bytes_per_name", "build_seconds", "load_seconds", "hits",
        ]
        for row in rows { #expect(fields.isSubset(of: Set(row.keys)), "\(row.keys)") }
        let csv = BenchOutput.csv(results).split(separator: "\n")
        #expect(csv.count == results.count + 1)
        #expect(csv.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 13 })
    }
}
