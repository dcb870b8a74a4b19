import CDynamicRuntime

/// A +1 object reference as a return value, without the `Object` box: what the forwarding
/// target stage returns and reads, so that a forwarded send allocates nothing for the target.
/// The one who holds it releases it (`release()`), once.
struct OwnedObject: MessageReturn, WordRepresentable {
    let raw: sf_id?

    /// Retains `raw` for the caller.
    init(retaining raw: sf_id?) {
        if let raw { sf_retain_inline(raw) }
        self.raw = raw
    }

    static var returnEncoding: TypeEncoding { .object }
    /// Adopts the +1 reference a method returned.
    init(returnStorage: UnsafeRawPointer) { raw = returnStorage.load(as: sf_id?.self) }
    /// Hands the +1 reference on to the caller.
    func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_id?.self) }
    var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    init(word: UInt64) { raw = sf_id(bitPattern: UInt(word)) }

    func release() { if let raw { sf_release_inline(raw) } }
}
