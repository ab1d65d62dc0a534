import Testing

@testable import MVVMRServer

/// Reading JetStream's message-get answers (what a session's restore reads its log with), without a server: the
/// store's own tests read real answers from a real nats-server.
@Suite struct NATSMessageGetTests {
    @Test func base64DecodesWhatRFC4648Encodes() {
        // RFC 4648 §10's test vectors.
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
                       "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.decode(encoded) == Array(plain.utf8), "\(encoded)")
        }
        #expect(Base64.decode("/+8=") == [0xFF, 0xEF])
    }

    @Test func base64RefusesWhatIsNotBase64() {
        for text in ["Zg=", "Zm9v!", "Zg==Zg==", "Z===", "Zh==", "Zm-v", "Zm9vY", "Zm9vA", "A"] {
            #expect(Base64.decode(text) == nil, "\(text)")
        }
    }

    @Test func aStoredMessageComesBackWithItsSequenceHeadersAndBody() throws {
        // The header block and body of a record as the store publishes it, as nats-server 2.9 answers them.
        let headerBlock = "NATS/1.0\r\nMvvmr-Kind: record\r\nMvvmr-Number: 7\r\nMvvmr-Kind: later\r\n\r\n"
        let answer = """
            {"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"mvvmr.session.abc.log",\
            "seq":42,"hdrs":"\(base64(Array(headerBlock.utf8)))","data":"\(base64(Array("{\"a\":1}".utf8)))",\
            "time":"2026-12-01T20:00:00.000000001Z"}}
            """
        let message = try #require(try NATSMessageGet.message(fromAnswer: Array(answer.utf8), asked: "s"))
        #expect(message.sequence == 42)
        #expect(message.subject == "mvvmr.session.abc.log")
        #expect(message.headers == ["Mvvmr-Kind": "record", "Mvvmr-Number": "7"], "the first value of a key counts")
        #expect(message.body == Array("{\"a\":1}".utf8))
    }

    @Test func aMessageWithoutHeadersOrBodyIsEmptyNotAnError() throws {
        let answer = #"{"message":{"subject":"x","seq":3,"time":"2026-12-01T20:00:00Z"}}"#
        let message = try #require(try NATSMessageGet.message(fromAnswer: Array(answer.utf8), asked: "x"))
        #expect(message.headers.isEmpty && message.body.isEmpty && message.sequence == 3)
    }

    @Test func noMessageFoundIsNilAndAnyOtherErrorIsUnavailable() throws {
        let none = #"{"error":{"code":404,"err_code":10037,"description":"no message found"}}"#
        #expect(try NATSMessageGet.message(fromAnswer: Array(none.utf8), asked: "x") == nil)
        let answers = [
            #"{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}"#,
            #"{"message":{"subject":"x","seq":0}}"#, "not json", #"{"message":{"subject":"x","seq":1,"data":"@@"}}"#,
            "{}",
        ]
        for answer in answers {
            #expect(throws: SessionStoreError.self, "\(answer)") {
                try NATSMessageGet.message(fromAnswer: Array(answer.utf8), asked: "x")
            }
        }
    }

    @Test func theRequestAsksForTheNextMessageOnTheSubject() throws {
        let request = NATSMessageGet.request(subject: "mvvmr.session.abc.log", from: 9)
        #expect(String(decoding: request, as: UTF8.self) == #"{"seq":9,"next_by_subj":"mvvmr.session.abc.log"}"#)
    }

    private func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var text = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                text.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : "=")
            }
            index += 3
        }
        return text
    }
}
