/// What the soak concludes from its samples, its counters and the hit account: each
/// failure a sentence that says what and by how much.
struct SoakVerdict {
    var failures: [String] = []
    var facts: [String] = []

    init(
        settings: SoakSettings, samples: [ProcSample], quietStart: ProcSample, quietEnd: ProcSample,
        ledger: SoakLedger, hits: HitAccount, exitStatus: Int32?
    ) {
        judgeMemory(settings, samples)
        let peak = max(samples.map(\.peak).max() ?? 0, quietEnd.peak)
        facts.append("peak VmHWM \(megabytes(peak)) (bound \(megabytes(SoakSettings.peakBound)))")
        if peak > SoakSettings.peakBound {
            failures.append(
                "the peak resident set (VmHWM) \(megabytes(peak)) is above the bound of \(megabytes(SoakSettings.peakBound))"
            )
        }

        facts.append(
            "quiet after warm-up: \(quietStart.openFiles) fds, \(quietStart.threads) threads; quiet at the end: "
                + "\(quietEnd.openFiles) fds, \(quietEnd.threads) threads")
        if quietEnd.openFiles > quietStart.openFiles + SoakSettings.openFileSlack {
            failures.append(
                "open files leak: \(quietEnd.openFiles) when quiet at the end against \(quietStart.openFiles) "
                    + "right after warm-up (slack \(SoakSettings.openFileSlack))")
        }
        if quietEnd.threads > quietStart.threads + SoakSettings.threadSlack {
            failures.append("threads grew from \(quietStart.threads) to \(quietEnd.threads)")
        }

        facts.append("load: \(ledger.summary)")
        if ledger.wrongAnswers > 0 {
            failures.append("\(ledger.wrongAnswers) answers contradicted the policy in force")
        }
        if ledger.unansweredRequests > 0 { failures.append("\(ledger.unansweredRequests) requests got no answer") }
        if ledger[.answersChecked] == 0 || ledger[.swapAnswersChecked] == 0 {
            failures.append(
                "the load checked too little: \(ledger[.answersChecked]) answers, \(ledger[.swapAnswersChecked]) after swaps"
            )
        }

        facts.append(
            "hits on \(SoakNames.hit): made \(ledger.hitsMade) (dns \(ledger.hits(.dns)), proxy \(ledger.hits(.proxy))); \(hits)"
        )
        if hits.total != ledger.hitsMade {
            failures.append(
                "hits lost or invented: the load was refused \(ledger.hitsMade) times, the gateway accounts for \(hits.total)"
            )
        }
        if ledger.hitsMade == 0 { failures.append("the load made no hits to account for") }
        if hits.deadLettered > 0 { failures.append("\(hits.deadLettered) hit rows were dead-lettered") }
        if exitStatus != 0 {
            failures.append("run did not exit 0 on SIGTERM: \(exitStatus.map(String.init) ?? "still running")")
        }
    }

    /// Resident memory after warm-up: the mean of the first samples against the mean of
    /// the last ones, both under load.
    private mutating func judgeMemory(_ settings: SoakSettings, _ samples: [ProcSample]) {
        let loaded = samples.filter { $0.phase == .load }
        let count = SoakSettings.samplesAveraged
        guard loaded.count >= 2 * count else {
            failures.append("too few samples after warm-up to judge memory: \(loaded.count)")
            return
        }
        func mean(_ slice: ArraySlice<ProcSample>) -> Double {
            Double(slice.map(\.resident).reduce(0, +)) / Double(slice.count)
        }
        let first = mean(loaded.prefix(count))
        let last = mean(loaded.suffix(count))
        let growth = last / first - 1
        facts.append(
            "resident after warm-up \(megabytes(Int(first))), at the end \(megabytes(Int(last))) "
                + "(\(String(format: "%+.1f", growth * 100)) %, limit +\(Int(SoakSettings.growthLimit * 100)) %)")
        if growth > SoakSettings.growthLimit {
            failures.append(
                "resident memory grew \(String(format: "%.1f", growth * 100)) % after warm-up "
                    + "(\(megabytes(Int(first))) to \(megabytes(Int(last)))), more than \(Int(SoakSettings.growthLimit * 100)) %"
            )
        }
    }
}
