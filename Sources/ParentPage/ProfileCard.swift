import DomainMatch
import Policy
import Zoneinfo

/// One child's state now, as the home page's card and `GET /api/profiles` show it.
struct ProfileCard: Equatable {
    enum State: String {
        case allowed, paused, downtime, schedule, extended
        case dailyLimit = "daily_limit"
    }

    struct Budget: Equatable {
        let app: String
        let usedMinutes: Int
        let limitMinutes: Int
    }

    let name: String
    let state: State
    /// When the state ends (unix seconds); nil: not on its own (a pause until resumed, or
    /// allowed with nothing coming within a week).
    let until: Int64?
    let overrides: [Override]
    let budgets: [Budget]
    /// Minutes online today against the daily limit and the parent's bonus minutes of the
    /// day; nil when the policy has no daily limit.
    let daily: Budget?

    /// The card of `profile` at `instant`: a pause first, then a cutoff (lifted while an
    /// extension lasts), as the decision order has them.
    init(_ profile: Profile, engine: DecisionEngine<LabelTrie>, at instant: Int64) {
        name = profile.name
        let zone = engine.zone
        let local = zone.localDateTime(at: instant)
        let overrides = profile.overrides
        self.overrides = overrides.all.filter { $0.end.map { $0 > instant } ?? true }
        let time = profile.rules.time
        if let pause = overrides.pause(at: instant) {
            state = .paused
            until = pause.end
        } else if let lifted = overrides.extension(at: instant) {
            state = .extended
            until = lifted.end
        } else if let cutoff = time.cutoff(at: local) {
            state = cutoff == .downtime ? .downtime : .schedule
            until = time.cutoffEnd(from: instant, zone: zone)
        } else if engine.reachedDailyLimit(
            profile.rules, profile.usage, overrides: overrides, local: local, instant: instant)
        {
            state = .dailyLimit
            until = Times.nextMidnight(after: instant, zone: zone)
        } else {
            state = .allowed
            until = nil
        }
        let day = local.daysSince1970
        let dailyLimit = profile.rules.dailyLimitMinutes
        daily =
            dailyLimit > 0
            ? Budget(
                app: "daily_limit", usedMinutes: profile.usage.onlineMinutes(day: day),
                limitMinutes: dailyLimit + overrides.dailyBonusMinutes(day: day, at: instant)) : nil
        var budgets: [Budget] = []
        for service in engine.services.services {
            guard let limit = profile.rules.dailyMinutes(for: service) else { continue }
            budgets.append(
                Budget(
                    app: service.id, usedMinutes: profile.usage.minutes(service.id, day: day),
                    limitMinutes: limit + overrides.bonusMinutes(service.id, day: day, at: instant)))
        }
        self.budgets = budgets
    }
}
