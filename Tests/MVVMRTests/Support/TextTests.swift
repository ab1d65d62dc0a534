import MVVMR
import Testing

// The Foundation-free text helpers pages use: trimming, words, case-insensitive comparisons.

@Suite struct TextTests {
    @Test func trimmedDropsWhitespaceAndNewlinesAtBothEndsOnly() {
        #expect("  Buy milk \n".trimmed == "Buy milk")
        #expect("Buy  milk".trimmed == "Buy  milk")
        #expect("\t\r\nBuy\r\n".trimmed == "Buy")
        #expect("x".trimmed == "x")
        #expect(" x".trimmed == "x")
        #expect("x ".trimmed == "x")
    }

    @Test func trimmedOfNothingOrOnlyWhitespaceIsEmpty() {
        #expect("".trimmed == "")
        #expect(" ".trimmed == "")
        #expect(" \t\n\r\n ".trimmed == "")
        #expect("\u{00A0}\u{3000}\u{2028}".trimmed == "")
    }

    @Test func trimmedKnowsUnicodeWhitespace() {
        // No-break space, ideographic space, line and paragraph separators, next line, em space.
        #expect("\u{00A0}Zoë\u{3000}".trimmed == "Zoë")
        #expect("\u{2028}a b\u{2029}".trimmed == "a b")
        #expect("\u{0085}\u{2003}日本\u{2003}".trimmed == "日本")
        // A zero-width space is not whitespace (Unicode's White_Space property), so it stays.
        #expect("\u{200B}a".trimmed == "\u{200B}a")
        // Combining marks stay with their letters, and emoji are one character each.
        #expect(" e\u{301} ".trimmed == "e\u{301}")
        #expect(" 👩‍👩‍👧 ".trimmed == "👩‍👩‍👧")
    }

    @Test func trimmedWorksOnSubstrings() {
        let line = "  a, b  ,c"
        let parts = line.split(separator: ",").map(\.trimmed)
        #expect(parts == ["a", "b", "c"])
    }

    @Test func wordsAreTheRunsBetweenWhitespace() {
        #expect("  Ada \t Lovelace\n".words == ["Ada", "Lovelace"])
        #expect("one".words == ["one"])
        #expect("".words == [])
        #expect(" \n\t ".words == [])
        #expect("a\u{00A0}b\u{3000}c\r\nd".words == ["a", "b", "c", "d"])
        #expect("  Ada   Lovelace ".words.joined(separator: " ") == "Ada Lovelace")
    }

    @Test func containsIgnoringCase() {
        #expect("Buy Milk".containsIgnoringCase("milk"))
        #expect("Buy Milk".containsIgnoringCase("UY M"))
        #expect(!"Buy Milk".containsIgnoringCase("bread"))
        #expect("Buy Milk".containsIgnoringCase(""))
        #expect("".containsIgnoringCase(""))
        #expect(!"".containsIgnoringCase("a"))
        #expect(!"mil".containsIgnoringCase("milk"))
        // Beyond ASCII: accented capitals, ß against SS, final sigma against capital sigma.
        #expect("ÉCOLE".containsIgnoringCase("école"))
        #expect("Straße".containsIgnoringCase("STRASSE"))
        #expect("\u{39F}\u{394}\u{39F}\u{3A3}".containsIgnoringCase("\u{3BF}\u{3B4}\u{3BF}\u{3C3}"))  // medial σ
        #expect("\u{39F}\u{394}\u{39F}\u{3A3}".containsIgnoringCase("\u{3BF}\u{3B4}\u{3BF}\u{3C2}"))  // final ς
        // Characters compare whole: an `e` does not match the `é` of a decomposed "café".
        #expect(!"cafe\u{301}".containsIgnoringCase("cafe"))
        #expect("CAFE\u{301}".containsIgnoringCase("caf\u{E9}"))
    }

    @Test func hasPrefixAndEqualsIgnoringCase() {
        #expect("Swift 6".hasPrefixIgnoringCase("SWIFT"))
        #expect("Swift 6".hasPrefixIgnoringCase(""))
        #expect(!"Swift 6".hasPrefixIgnoringCase("6"))
        #expect(!"Sw".hasPrefixIgnoringCase("Swift"))
        #expect("straße".hasPrefixIgnoringCase("STRASS"))
        #expect("Milk".equalsIgnoringCase("mILK"))
        #expect("".equalsIgnoringCase(""))
        #expect(!"Milk".equalsIgnoringCase("Milk "))
    }
}
