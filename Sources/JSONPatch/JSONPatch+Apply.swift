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
        try apply(toDocument: &result)
        return result
    }

    /// Applies the operations to `document` in place; on failure `document` is left unchanged.
    ///
    /// Each operation mutates `document` itself, not a copy (a container that only `document` holds is
    /// changed where it stands: one value in a 100,000-element array costs that value), and records how
    /// to take itself back; when an operation fails, the ones before it are rolled back, newest first,
    /// restoring the document exactly, its members' order included.
    ///
    /// - Parameter document: The document to patch.
    /// - Throws: ``JSONPatchError`` naming the failing operation's index.
    public func apply(toDocument document: inout JSONValue) throws(JSONPatchError) {
        var undo: [PatchApplier.Undo] = []
        undo.reserveCapacity(operations.count)
        for (index, operation) in operations.enumerated() {
            do {
                try PatchApplier.apply(operation, to: &document, undo: &undo)
            } catch {
                PatchApplier.rollBack(undo, in: &document)
                var located = error
                located.operationIndex = index
                throw located
            }
        }
    }
}
