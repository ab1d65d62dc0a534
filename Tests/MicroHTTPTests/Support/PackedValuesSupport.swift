@testable import MicroHTTP

/// Values packed as the C shim packs them (`mvvmr_mhd_pack_value`): kind, key length, value length (`nil`: none),
/// key, value.
func packedValues(_ values: [(kind: UInt8, key: String, value: String?)]) -> PackedValues {
    var bytes: [UInt8] = []
    for value in values {
        bytes.append(value.kind)
        withUnsafeBytes(of: UInt32(value.key.utf8.count)) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: value.value.map { UInt32($0.utf8.count) } ?? UInt32.max) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: value.key.utf8)
        bytes.append(contentsOf: (value.value ?? "").utf8)
    }
    return PackedValues(bytes: bytes)
}
