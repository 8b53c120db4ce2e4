import Testing

@testable import Metrics

@Suite struct MetricsTests {
    @Test func labelValuesAreEscapedAndSamplesWritten() {
        var page = Exposition()
        page.family("x_total", .counter, "a help\nwith a line break and a \\ backslash")
        page.sample("x_total", [("profile", #"a"b\c"#), ("other", "line\nbreak")], 3)
        page.sample("y", [], 0.25)
        #expect(
            page.text == """
                # HELP x_total a help\\nwith a line break and a \\\\ backslash
                # TYPE x_total counter
                x_total{profile="a\\"b\\\\c",other="line\\nbreak"} 3
                y 0.25

                """)
    }

    @Test func aHistogramIsCumulativeWithSumAndCount() {
        let histogram = Histogram(bounds: [0.001, 0.01, 0.1])
        histogram.observe(nanoseconds: 500_000)  // 0.5 ms
        histogram.observe(nanoseconds: 5_000_000)  // 5 ms
        histogram.observe(nanoseconds: 5_000_000)
        histogram.observe(nanoseconds: 2_000_000_000)  // 2 s: only +Inf
        var page = Exposition()
        page.histogram("lat_seconds", [("upstream", "u")], histogram)
        #expect(
            page.text == """
                lat_seconds_bucket{upstream="u",le="0.001"} 1
                lat_seconds_bucket{upstream="u",le="0.01"} 3
                lat_seconds_bucket{upstream="u",le="0.1"} 3
                lat_seconds_bucket{upstream="u",le="+Inf"} 4
                lat_seconds_sum{upstream="u"} 2.0105
                lat_seconds_count{upstream="u"} 4

                """)
    }

    @Test func labeledCountsStayBoundedAndGridCellsAreApart() {
        let counter = LabeledCounter(labelNames: ["reason", "profile"], limit: 2)
        counter.add(["a", "kid"])
        counter.add(["b", "kid"], 2)
        counter.add(["c", "kid"])  // past the limit: counted as other
        counter.add(["d", "kid"])
        counter.add(["a", "kid"])
        #expect(counter.values.map(\.labels) == [["a", "kid"], ["b", "kid"], ["other", "other"]])
        #expect(counter.values.map(\.value) == [2, 2, 2])

        let grid = CounterGrid(rows: ["A", "AAAA"], columns: ["noerror", "nxdomain"])
        grid.add(row: 1, column: 0)
        grid.add(row: 1, column: 0)
        grid.add(row: 0, column: 1)
        grid.add(row: 5, column: 0)  // ignored
        #expect([grid.value(row: 0, column: 0), grid.value(row: 0, column: 1)] == [0, 1])
        #expect([grid.value(row: 1, column: 0), grid.value(row: 1, column: 1)] == [2, 0])
    }
}
