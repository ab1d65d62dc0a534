// Text helpers for pages, with the standard library alone: server modules do not import Foundation
// (scripts/check-foundation.sh), so `trimmingCharacters(in:)`, `components(separatedBy: .whitespaces)` and
// `localizedCaseInsensitiveContains(_:)` are not there. Whitespace is Unicode's (`Character.isWhitespace`: spaces,
// tabs, newlines, `\r\n`, no-break and ideographic spaces, U+2028…), not only ASCII's.

extension StringProtocol {
    /// The text without the whitespace and newlines at its start and end (Unicode whitespace, as
    /// `Character.isWhitespace` defines it); whitespace inside is kept.
    ///
    /// ```swift
    /// "  Buy milk \n".trimmed      // "Buy milk"
    /// " \t\n".trimmed              // ""
    /// ```
    public var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// The words of the text: its runs of characters between whitespace (Unicode whitespace, newlines too), with
    /// no empty word. `words.joined(separator: " ")` collapses the whitespace of a typed name.
    ///
    /// ```swift
    /// "  Ada \t Lovelace\n".words   // ["Ada", "Lovelace"]
    /// ```
    public var words: [String] {
        String(self).split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// Whether `other` occurs in the text, ignoring case: both are compared case-folded (upper-cased, then
    /// lower-cased: `ß` matches `SS`, `ς` matches `Σ`), character by character, as `==` compares characters.
    /// An empty `other` occurs in every text.
    ///
    /// ```swift
    /// "Buy Milk".containsIgnoringCase("milk")   // true
    /// ```
    /// - Parameter other: the text to look for.
    public func containsIgnoringCase(_ other: some StringProtocol) -> Bool {
        let needle = other.caseFolded
        if needle.isEmpty { return true }
        return caseFolded.contains(needle)
    }

    /// Whether the text starts with `prefix`, ignoring case (compared case-folded, as in
    /// ``containsIgnoringCase(_:)``). Every text starts with the empty prefix.
    ///
    /// ```swift
    /// "Swift 6".hasPrefixIgnoringCase("SWIFT")  // true
    /// ```
    /// - Parameter prefix: the text it should start with.
    public func hasPrefixIgnoringCase(_ prefix: some StringProtocol) -> Bool {
        caseFolded.hasPrefix(prefix.caseFolded)
    }

    /// Whether the text equals `other`, ignoring case (compared case-folded, as in ``containsIgnoringCase(_:)``).
    /// - Parameter other: the text to compare with.
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        caseFolded == other.caseFolded
    }

    /// The text upper-cased then lower-cased: close to Unicode's full case folding without its tables.
    var caseFolded: String { uppercased().lowercased() }
}
