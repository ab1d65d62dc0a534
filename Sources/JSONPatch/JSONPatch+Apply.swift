extension JSONPatch {
    /// Applies the operations in order and returns the patched document.
    ///
    /// Application is atomic: if any operation fails the error is thrown and no partially
    /// patched document escapes (the input is a value and is never modified).
    ///
    /// - Parameter document: The document to patch.
    /// - Returns: The patched document.
    /// - Throws: ``JSONPatchError`` naming the failing operation's index.
    public func apply(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var result = document
        for (index, operation) in operations.enumerated() {
            do {
                try PatchApplier.apply(operation, to: &result)
            } catch {
                var located = error
                located.operationIndex = index
                throw located
            }
        }
        return result
    }

    /// Applies the operations to `document` in place; on failure `document` is left unchanged.
    ///
    /// - Parameter document: The document to patch.
    /// - Throws: ``JSONPatchError`` naming the failing operation's index.
    public func apply(toDocument document: inout JSONValue) throws(JSONPatchError) {
        document = try apply(to: document)
    }
}
