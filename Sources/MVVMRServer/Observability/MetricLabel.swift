/// Label values the server's metrics use for names a client chose.
///
/// Every label value of a metric comes from a fixed set: the app's registered units and actions, the
/// routes, the statuses and the error codes. A name a client makes up (a unit or action that does not
/// exist) is counted under ``unknown`` instead of getting a series of its own, so no client can grow
/// `/metrics` or the server's memory by inventing names.
enum MetricLabel {
    /// The one label value for every unit or action name the app does not declare.
    static let unknown = "unknown"
}
