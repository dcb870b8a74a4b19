/// The frame of an integer-register thunk: five argument registers stored as words, an
/// argument vector pointing at them, and two return words after them (at +40). `body` runs
/// over the frame; the first return word goes back to %rax. Shared by closure IMPs' register
/// thunks and hooks' register entries, which differ only in what runs over the frame; inlined
/// into each (the thunks' code is the same as when each spelled the frame out).
@inline(__always)
func withIntegerRegisterFrame<E: Error>(
    _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64,
    _ body: (_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(E) -> Void
) throws(E) -> UInt64 {
    var words = (a0, a1, a2, a3, a4, UInt64(0), UInt64(0))
    return try withUnsafeMutableBytes(of: &words) { (w) throws(E) in
        let base = w.baseAddress!
        var argv: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
                   UnsafeMutableRawPointer?) = (base, base + 8, base + 16, base + 24, base + 32)
        try withUnsafeMutablePointer(to: &argv) { (tuple) throws(E) in
            try body(base + 40, UnsafeMutableRawPointer(tuple).assumingMemoryBound(to: UnsafeMutableRawPointer?.self))
        }
        return (base + 40).load(as: UInt64.self)
    }
}
