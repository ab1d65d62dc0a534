import CSQLite

/// A compiled SQLite statement, prepared once and run many times: bind, step, read columns, reset.
/// Used by one thread at a time, like its connection, which it keeps alive.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `text` (as UTF-8) to parameter `index` (1-based).
    func bind(_ text: String, at index: Int32) throws(SessionStoreError) {
        var text = text
        let code = text.withUTF8 { bytes in
            // A zero-length text with no buffer would bind NULL: give SQLite a pointer to an empty C string.
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, mvvmr_sqlite_transient())
            }
            return start.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                sqlite3_bind_text64(
                    handle, index, characters, sqlite3_uint64(bytes.count), mvvmr_sqlite_transient(),
                    UInt8(SQLITE_UTF8))
            }
        }
        guard code == SQLITE_OK else { throw connection.failure(code) }
    }

    /// Binds `bytes` as a blob (empty, not NULL, when there are none) to parameter `index`.
    func bind(_ bytes: [UInt8], at index: Int32) throws(SessionStoreError) {
        let code = bytes.withUnsafeBytes { buffer in
            guard let start = buffer.baseAddress, !buffer.isEmpty else {
                return sqlite3_bind_zeroblob(handle, index, 0)
            }
            return sqlite3_bind_blob64(
                handle, index, start, sqlite3_uint64(buffer.count), mvvmr_sqlite_transient())
        }
        guard code == SQLITE_OK else { throw connection.failure(code) }
    }

    /// Binds an integer to parameter `index`.
    func bind(_ value: Int, at index: Int32) throws(SessionStoreError) {
        try bind(Int64(value), at: index)
    }

    /// Binds an integer to parameter `index`.
    func bind(_ value: Int64, at index: Int32) throws(SessionStoreError) {
        let code = sqlite3_bind_int64(handle, index, value)
        guard code == SQLITE_OK else { throw connection.failure(code) }
    }

    /// Runs the statement to its next row: true when there is one to read, false when it is done.
    func step() throws(SessionStoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(code)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(SessionStoreError) {
        defer { reset() }
        _ = try step()
    }

    /// Makes the statement ready to run again, its parameters unbound.
    func reset() {
        // The result repeats the last step's error, which the step already reported.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Whether column `index` (0-based) of the current row is NULL.
    func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` of the current row as an integer (0 for NULL).
    func integer(at index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` of the current row as text ("" for NULL).
    func text(at index: Int32) -> String {
        guard let start = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (none for NULL or an empty blob).
    func bytes(at index: Int32) -> [UInt8] {
        guard let start = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    }
}
