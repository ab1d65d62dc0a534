#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Serves files from one directory, and never anything outside it.
///
/// Each path segment is decoded on its own; a segment that is `.` or `..`, or holds a `/`, `\` or NUL
/// once decoded is refused with 400 `invalid_path`; dotfiles are not served (404); the file found is
/// resolved with `realpath` and served only when it lies inside the directory, so symbolic links that
/// point out are refused too (404). Answers carry a content type, an `ETag` (size and modification time),
/// `Cache-Control: no-cache` (always revalidate), and 304 for a matching `If-None-Match`. `/` and
/// directories serve their `index.html`.
///
/// ```swift
/// var router = HTTPRouter()
/// router.fallback = StaticFiles(directory: "Public").handler
/// ```
public struct StaticFiles: Sendable {
    /// The directory as configured.
    public let directory: String
    /// The largest file served.
    public let maxFileBytes: Int

    /// Creates a file server for `directory`.
    /// - Parameters:
    ///   - directory: the directory; relative paths are resolved against the working directory.
    ///   - maxFileBytes: the largest file served (larger ones are 404), 64 MiB by default.
    public init(directory: String, maxFileBytes: Int = 64 << 20) {
        self.directory = directory
        self.maxFileBytes = maxFileBytes
    }

    /// A route handler serving these files (use it as ``HTTPRouter/fallback``).
    public var handler: RouteHandler {
        .synchronous { request in self.response(for: request) }
    }

    /// The response for a `GET` or `HEAD` request.
    /// - Parameter request: the request; its decoded ``HTTPRequest/pathSegments`` name the file.
    /// - Returns: the file, 304, or a JSON error (400 `invalid_path`, 404 `not_found`).
    public func response(for request: HTTPRequest) -> HTTPResponse {
        response(forSegments: request.pathSegments, ifNoneMatch: request.headers["If-None-Match"])
    }

    /// The response for a file named by decoded path segments.
    /// - Parameters:
    ///   - segments: the decoded path segments.
    ///   - ifNoneMatch: the request's `If-None-Match` value, if any.
    /// - Returns: the file, 304, or a JSON error.
    public func response(forSegments segments: [String], ifNoneMatch: String?) -> HTTPResponse {
        for segment in segments {
            if segment == "." || segment == ".." || segment.utf8.contains(where: { $0 == 0 || $0 == 47 || $0 == 92 }) {
                return HTTPError.invalidPath.response
            }
            if segment.hasPrefix(".") { return HTTPError.notFound.response }
        }
        guard let rootPath = Self.realPath(directory) else { return HTTPError.notFound.response }
        var candidate = rootPath
        for segment in segments { candidate += "/" + segment }
        guard let resolved = Self.realPath(candidate),
            resolved == rootPath || resolved.hasPrefix(rootPath == "/" ? "/" : rootPath + "/")
        else { return HTTPError.notFound.response }

        var file = resolved
        var info = stat()
        guard stat(file, &info) == 0 else { return HTTPError.notFound.response }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard let index = Self.realPath(file + "/index.html"), index.hasPrefix(rootPath + "/") else {
                return HTTPError.notFound.response
            }
            file = index
            guard stat(file, &info) == 0 else { return HTTPError.notFound.response }
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= maxFileBytes else {
            return HTTPError.notFound.response
        }

        let entityTag = "\"\(String(UInt64(info.st_size), radix: 16))-\(String(info.st_mtim.tv_sec, radix: 16))-\(String(info.st_mtim.tv_nsec, radix: 16))\""
        var headers: HTTPHeaders = [
            "Content-Type": MediaTypes.contentType(forPath: file),
            "ETag": entityTag,
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
        ]
        if let ifNoneMatch, Self.matches(ifNoneMatch, entityTag) {
            headers["Content-Type"] = nil
            return HTTPResponse(status: 304, headers: headers)
        }
        guard let contents = Self.readFile(file, expectedSize: Int(info.st_size)) else { return HTTPError.notFound.response }
        return HTTPResponse(status: 200, headers: headers, body: .bytes(contents))
    }

    private static func matches(_ ifNoneMatch: String, _ entityTag: String) -> Bool {
        for candidate in ifNoneMatch.split(separator: ",") {
            var tag = candidate.trimmingSpaces
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            if tag == entityTag { return true }
        }
        return false
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func readFile(_ path: String, expectedSize: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents = [UInt8](repeating: 0, count: expectedSize)
        var offset = 0
        while offset < expectedSize {
            let count = contents.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + offset }, expectedSize - offset)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            offset += count
        }
        return offset == expectedSize ? contents : Array(contents[..<offset])
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
