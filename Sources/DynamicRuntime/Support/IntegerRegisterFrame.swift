/// The frame of a register thunk: five integer argument registers stored as words, an argument
/// vector pointing at them, and two return words after them (at +40). `body` runs Swift over
/// the frame; the first return word goes back to %rax. Shared by closure IMPs and hook entries,
/// whose thunks differ only in what runs over the frame.
@inline(__always)
func withIntegerRegisterFrame(
    _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64,
    _ body: (_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void
) -> UInt64 {
    var words = (a0, a1, a2, a3, a4, UInt64(0), UInt64(0))
    return withUnsafeMutableBytes(of: &words) { w in
        let base = w.baseAddress!
        var argv: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
                   UnsafeMutableRawPointer?) = (base, base + 8, base + 16, base + 24, base + 32)
        withUnsafeMutablePointer(to: &argv) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 5) { args in body(base + 40, args) }
        }
        return (base + 40).load(as: UInt64.self)
    }
}
