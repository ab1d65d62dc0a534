import Testing

@testable import MicroHTTP

/// Cookies and query parameters as RequestValues reads them from the C shim's packing (MicroHTTP splits the
/// `Cookie` fields itself and keeps the first cookie of a name; it percent-decodes query names and values).
@Suite struct RequestValuesTests {
    /// libmicrohttpd's `MHD_COOKIE_KIND` and `MHD_GET_ARGUMENT_KIND`.
    private static let cookie: UInt8 = 2
    private static let query: UInt8 = 8


    /// The common methods come back as literals, any other method (and a prefix or an extension of a common one)
    /// as its own bytes.
    @Test func aMethodNameIsTheMethodsOwnText() {
        for method in ["GET", "POST", "PUT", "PATCH", "HEAD", "DELETE", "OPTIONS", "PROPFIND", "POS", "POSTS", "G", "", "get"] {
            #expect(method.withCString { HTTPServer.methodName($0) } == method)
        }
    }

    @Test func theFirstCookieOfANameWinsAndCookiesAreNotDecoded() {
        let values = RequestValues(
            packed: packedValues([
                (PackedValues.headerKind, "Cookie", "mvvmr_session=first%20one; mvvmr_session=second"),
                (PackedValues.headerKind, "cookie", " empty ;q=\"quoted\""), (PackedValues.headerKind, "Host", "h"),
                // The library's own cookie entries are not read: MicroHTTP parses the fields.
                (Self.cookie, "ignored", "1"),
            ]))
        #expect(values.cookies == ["mvvmr_session": "first%20one", "empty": "", "q": "quoted"])
        #expect(values.headers["Host"] == "h")
    }

    @Test func queryParametersAreDecodedInOrderAndUndecodableOnesDropped() {
        let values = RequestValues(
            packed: packedValues([
                (Self.query, "last%45ventId", "5"), (Self.query, "flag", nil), (Self.query, "bad", "%zz"),
                (Self.query, "nul", "a%00"), (Self.query, "path", "a%2Fb"), (Self.query, "flag", "again"),
            ]))
        #expect(
            values.query == [
                QueryItem(name: "lastEventId", value: "5"), QueryItem(name: "flag", value: nil),
                QueryItem(name: "path", value: "a/b"), QueryItem(name: "flag", value: "again"),
            ])
    }

    @Test func aPackingCutInsideAValueKeepsOnlyTheWholeOnes() {
        let whole = packedValues([(PackedValues.headerKind, "Cookie", "a=1"), (Self.query, "b", "2")])
        let cut = RequestValues(packed: PackedValues(bytes: Array(whole.bytes.dropLast())))
        #expect(cut.cookies == ["a": "1"])
        #expect(cut.query.isEmpty)
    }
}
