/// Whether a caller's page-session steps recorded an input, even one that then threw: what a server needs to know
/// before it runs a refused request again on the session restored from its store (once an input is in the log,
/// running the request again would apply it twice).
package struct InputReceipt: Sendable {
    /// Whether a step noted here recorded at least one input.
    package private(set) var recordedAnInput = false

    /// A receipt of no step yet.
    package init() {}

    /// Notes a step that took the session's input number from `before` to `after`.
    mutating func noteStep(from before: Int, to after: Int) {
        if after != before { recordedAnInput = true }
    }
}
