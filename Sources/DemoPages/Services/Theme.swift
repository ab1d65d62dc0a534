import JSONPatch
import MVVMR

/// The app's colour theme, chosen on the settings page and shown on the main page.
public enum Theme: String, Sendable, Hashable, CaseIterable, Codable, ActionValue, JSONSchemaDescribing {
    /// Dark text on a light background.
    case light
    /// Light text on a dark background.
    case dark

    /// Themes are sent as the JSON strings "light" and "dark".
    public static var actionValueType: ActionValueType { .string }

    /// Decodes "light" or "dark"; any other value is not a theme.
    /// - Parameter json: the action's value.
    public init?(actionValue json: JSONValue) {
        guard case .string(let name) = json, let theme = Theme(rawValue: name) else { return nil }
        self = theme
    }

}
