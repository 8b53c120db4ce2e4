import Policy

/// What the sync thread needs of app minutes (docs/services.md#budgets): each flushed
/// profile's minutes, the local day of an instant (the gateway's zone), the catalogue as
/// it is now (kinds and bundle ids for the `screen_time` report) and the budgets each
/// profile enforces at an instant (service id → daily minutes, for `status`; the daily
/// limit under `ServiceUsage.online`).
public struct UsageSources: Sendable {
    public var usage: [String: ServiceUsage]
    public var localDay: @Sendable (Int64) -> Int
    public var services: @Sendable () -> ServiceCatalogue
    public var budgets: @Sendable (Int64) -> [String: [String: Int]]

    public init(
        usage: [String: ServiceUsage], localDay: @escaping @Sendable (Int64) -> Int,
        services: @escaping @Sendable () -> ServiceCatalogue,
        budgets: @escaping @Sendable (Int64) -> [String: [String: Int]]
    ) {
        self.usage = usage
        self.localDay = localDay
        self.services = services
        self.budgets = budgets
    }

    /// No app minutes: days in UTC, no catalogue, no budgets.
    public static let none = UsageSources(
        usage: [:], localDay: { Int(($0 >= 0 ? $0 : $0 - 86_399) / 86_400) }, services: { .empty },
        budgets: { _ in [:] })
}
