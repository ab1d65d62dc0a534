// libFuzzer target for what MicroHTTP's own engine reads of a connection's bytes: a request's head (RequestHead) and
// a chunked body (ChunkedBodyDecoder). Built by Fuzz/run.sh like request-target, with AddressSanitizer, which sees
// any read past the bytes (the head parser reads them through unsafe pointers).
//
// The first byte chooses what the rest is; a violated property traps on purpose (libFuzzer saves the input):
// - even, a head, read with a header limit of 64 + (first byte): a complete head lies inside the bytes, its method,
//   path and length are in order, the path starts with `/` (or is `*`), its packing reads back as whole entries, a
//   refusal is an error of status 400, 413, 414, 431 or 505; reading again gives the same outcome;
// - odd, a chunked body, fed whole and then cut at a point the second byte chooses: both ways end alike (the same
//   body, the same bytes used when complete), the body never passes its limit, and the bytes used are never more
//   than those given.
@testable import MicroHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 1 else { return 0 }
    let selector = data[0]
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if selector % 2 == 0 {
        checkHead(input, headerLimit: 64 + Int(selector))
    } else {
        checkChunked(input, limit: Int(selector) * 4)
    }
    return 0
}

private func outcomeSummary(_ outcome: RequestHead.Outcome) -> String {
    switch outcome {
    case .incomplete: "incomplete"
    case .refused(let error): "refused \(error.status) \(error.code) \(error.message)"
    case .complete(let head): "complete \(head.method) \(head.path) \(head.length) \(head.values.bytes) \(head.keepAlive)"
    }
}

private func checkHead(_ input: [UInt8], headerLimit: Int) {
    var packing = ByteWriter(capacity: 16)
    let outcome = input.withUnsafeBytes { RequestHead.read($0, headerLimit: headerLimit, maxBodyBytes: 1000, packing: &packing) }
    let again = input.withUnsafeBytes { RequestHead.read($0, headerLimit: headerLimit, maxBodyBytes: 1000, packing: &packing) }
    precondition(outcomeSummary(outcome) == outcomeSummary(again), "reading twice differs")
    switch outcome {
    case .incomplete:
        break
    case .refused(let error):
        precondition([400, 413, 414, 431, 505].contains(error.status), "unexpected refusal \(error.status)")
    case .complete(let head):
        precondition(head.length <= input.count, "head past the bytes")
        precondition(head.method.lowerBound >= 0 && head.method.upperBound <= head.path.lowerBound, "method after path")
        precondition(head.path.upperBound <= head.length, "path past the head")
        let first = input[head.path.lowerBound]
        precondition(first == UInt8(ascii: "/") || (first == UInt8(ascii: "*") && head.path.count == 1), "path start")
        var offset = 0
        head.values.bytes.withUnsafeBytes { raw in
            while let (_, next) = PackedValues.entry(at: offset, in: raw) { offset = next }
        }
        precondition(offset == head.values.bytes.count, "the packing does not tile")
        if case .contentLength(let length) = head.framing { precondition(length <= 1000, "body over the limit accepted") }
    }
}

private func checkChunked(_ input: [UInt8], limit: Int) {
    guard let cutByte = input.first else { return }
    let body = Array(input.dropFirst())
    var whole = ChunkedBodyDecoder(limit: limit)
    let wholeProgress = body.withUnsafeBytes { whole.read($0) }
    precondition(whole.body.count <= limit, "body past its limit")
    if case .complete(let used) = wholeProgress { precondition(used <= body.count, "used more than given") }

    let cut = body.isEmpty ? 0 : Int(cutByte) % (body.count + 1)
    var split = ChunkedBodyDecoder(limit: limit)
    var progress = body.withUnsafeBytes { split.read(UnsafeRawBufferPointer(rebasing: $0[0..<cut])) }
    var usedTotal = 0
    if case .needsMore = progress {
        usedTotal = cut
        progress = body.withUnsafeBytes { split.read(UnsafeRawBufferPointer(rebasing: $0[cut...])) }
        if case .complete(let used) = progress { progress = .complete(used: used + usedTotal) }
    }
    precondition(progress == wholeProgress, "cut and whole differ: \(progress) against \(wholeProgress)")
    if case .complete = progress { precondition(split.body == whole.body, "cut and whole read different bodies") }
}
