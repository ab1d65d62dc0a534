extension JSONPatch {
    /// Computes a patch that turns `old` into `new`.
    ///
    /// The patch is always correct (`try diff(from: a, to: b).apply(to: a) == b`) and small:
    /// - a changed scalar is one `replace`; objects are diffed member by member;
    /// - arrays whose elements are all objects with a unique identity member (see
    ///   ``DiffOptions/identityKey``) are diffed by identity: one `remove`, `add` or `move` per
    ///   changed row position, plus inner operations for rows that changed;
    /// - other arrays are diffed as sequences (common prefix and suffix trimmed, then Myers'
    ///   O(ND) algorithm up to ``DiffOptions/maxSequenceCost``).
    ///
    /// Array indices in the emitted operations are valid when the operations are applied in
    /// order. Numbers compare by value, so `1` and `1.0` produce no operation.
    ///
    /// ```swift
    /// let patch = JSONPatch.diff(from: ["a": 1, "b": [1, 2]], to: ["a": 2, "b": [1, 2, 3]])
    /// // [{"op":"replace","path":"/a","value":2},{"op":"add","path":"/b/2","value":3}]
    /// ```
    ///
    /// - Parameters:
    ///   - old: The document the patch will be applied to.
    ///   - new: The document the patch must produce.
    ///   - base: A prefix for every emitted path: pass the location of `old` inside a larger
    ///     document to get operations that apply to that larger document.
    ///   - options: Identity members and cost limits.
    /// - Returns: The patch.
    public static func diff(
        from old: JSONValue,
        to new: JSONValue,
        at base: JSONPointer = .root,
        options: DiffOptions = .init()
    ) -> JSONPatch {
        var differ = PatchDiffer(base: base, options: options)
        differ.diffValues(old, new)
        return JSONPatch(differ.operations)
    }
}
