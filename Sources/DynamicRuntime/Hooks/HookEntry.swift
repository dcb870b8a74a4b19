import CDynamicRuntime
import Synchronization

/// How calls enter a hook's trampoline, chosen from the signature when the hook is installed.
enum HookEntryKind: Equatable {
    /// Integer-register arguments only (2-5 registers), return in %rax or none: the slot hands
    /// the hook to a thunk in the next free integer register; no spill, no classification.
    case integerRegisters(Int)
    /// Every argument whole in integer (2-5) and SSE registers, return in %rax, %xmm0 or none.
    case registers(Int)
    /// Everything else the classifier takes: `sf_tramp_entry` spills the registers.
    case spill
    /// A libffi closure (the fallback).
    case libffi

    /// Test hook: false makes new hooks use the spill entry where they would take a register one.
    static let registerEntriesEnabled = Atomic<Bool>(true)

    static func choose(for layout: UnsafeMutablePointer<sf_tramp_layout>?) -> HookEntryKind {
        guard let layout else { return .libffi }
        guard registerEntriesEnabled.load(ordering: .relaxed) else { return .spill }
        let ints = Int(layout.pointee.int_only)
        if (2...5).contains(ints) { return .integerRegisters(ints) }
        let regs = Int(layout.pointee.reg_only)
        if (2...5).contains(regs) { return .registers(regs) }
        return .spill
    }

    /// The slot's target and context register for a register entry; nil for the others.
    func registerEntry(context: UnsafeRawPointer) -> ClosureIMP.RegisterEntry? {
        switch self {
        case let .integerRegisters(n):
            ClosureIMP.RegisterEntry(kind: Int32(n - 1), target: integerHookEntries[n - 2], context: context)
        case let .registers(n):
            ClosureIMP.RegisterEntry(kind: Int32(n - 1), target: registerHookEntries[n - 2], context: context)
        case .spill, .libffi:
            nil
        }
    }
}

// Written by scripts/generate-register-thunks.py (integerHookEntries): edit the script, not these lines.
/// Integer-register entries by register count (2-5): (arguments…, hook) -> %rax.
nonisolated(unsafe) private let integerHookEntries: [UnsafeRawPointer] = [
    CFunction.address(of: { (a0, a1, h) in
        enterInts(h!, a0, a1, 0, 0, 0)
    } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, h) in
        enterInts(h!, a0, a1, a2, 0, 0)
    } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, a3, h) in
        enterInts(h!, a0, a1, a2, a3, 0)
    } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, a3, a4, h) in
        enterInts(h!, a0, a1, a2, a3, a4)
    } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
]
// End of integerHookEntries.

/// Runs the hook over the integer registers stored in this frame; the word it returns goes to %rax.
@inline(__always)
private func enterInts(_ hook: UnsafeRawPointer, _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64) -> UInt64 {
    ObjectWord<MethodHook>(hook).withObject { h in
        do throws(RuntimeError) {
            return try h.runWords(a0, a1, a2, a3, a4)
        } catch {
            h.raise(error)
            return 0
        }
    }
}

extension MethodHook {
    /// Runs the hook over integer argument words (receiver, selector, arguments) and returns the
    /// return register's word: the register entries' body.
    @inline(__always)
    func runWords(_ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64) throws(RuntimeError) -> UInt64 {
        Runtime.discardStalePending()  // as `run`: a direct call starts clean
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let (r, failure) = MethodHook.runWordCall(ObjectWord(unretained: self), a0, a1, a2, a3, a4)
        if let failure { throw PendingError.unbox(failure) }
        return r
    }
}

// Written by scripts/generate-register-thunks.py (registerHookEntries): edit the script, not these lines.
private typealias RegisterEntry2 = @convention(c) (UInt64, UInt64, UnsafeRawPointer?,
    Double, Double, Double, Double, Double, Double, Double, Double) -> sf_tramp_ret
private typealias RegisterEntry3 = @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?,
    Double, Double, Double, Double, Double, Double, Double, Double) -> sf_tramp_ret
private typealias RegisterEntry4 = @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?,
    Double, Double, Double, Double, Double, Double, Double, Double) -> sf_tramp_ret
private typealias RegisterEntry5 = @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?,
    Double, Double, Double, Double, Double, Double, Double, Double) -> sf_tramp_ret

/// Integer- and SSE-register entries by integer register count (2-5): every argument register
/// is taken (unused ones carry whatever the caller left), the return goes out in %rax and %xmm0.
nonisolated(unsafe) private let registerHookEntries: [UnsafeRawPointer] = [
    CFunction.address(of: { (a0, a1, h, d0, d1, d2, d3, d4, d5, d6, d7) in
        enterRegisters(h!, (a0, a1, 0, 0, 0), (d0, d1, d2, d3, d4, d5, d6, d7))
    } as RegisterEntry2),
    CFunction.address(of: { (a0, a1, a2, h, d0, d1, d2, d3, d4, d5, d6, d7) in
        enterRegisters(h!, (a0, a1, a2, 0, 0), (d0, d1, d2, d3, d4, d5, d6, d7))
    } as RegisterEntry3),
    CFunction.address(of: { (a0, a1, a2, a3, h, d0, d1, d2, d3, d4, d5, d6, d7) in
        enterRegisters(h!, (a0, a1, a2, a3, 0), (d0, d1, d2, d3, d4, d5, d6, d7))
    } as RegisterEntry4),
    CFunction.address(of: { (a0, a1, a2, a3, a4, h, d0, d1, d2, d3, d4, d5, d6, d7) in
        enterRegisters(h!, (a0, a1, a2, a3, a4), (d0, d1, d2, d3, d4, d5, d6, d7))
    } as RegisterEntry5),
]
// End of registerHookEntries.

/// The registers laid out as `sf_tramp_frame` keeps them (rdi…r9, xmm0…xmm7), then the four
/// return words; arguments point into them as the signature's layout says.
private func enterRegisters(_ hook: UnsafeRawPointer, _ i: (UInt64, UInt64, UInt64, UInt64, UInt64),
                            _ d: (Double, Double, Double, Double, Double, Double, Double, Double)) -> sf_tramp_ret {
    var words = (i.0, i.1, i.2, i.3, i.4, UInt64(0),
                 d.0.bitPattern, d.1.bitPattern, d.2.bitPattern, d.3.bitPattern,
                 d.4.bitPattern, d.5.bitPattern, d.6.bitPattern, d.7.bitPattern,
                 UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    return withUnsafeMutableBytes(of: &words) { w in
        let regs = w.baseAddress!.assumingMemoryBound(to: UInt64.self)
        let retWords = regs + 14
        ObjectWord<MethodHook>(hook).withObject { h in
            let layout = h.directLayout!  // set whenever a register entry is
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: Int(layout.pointee.nargs)) { args in
                let ret = sf_tramp_regs_args(layout, regs, retWords, args.baseAddress)!
                h.enter(ret, args.baseAddress!)
            }
        }
        return sf_tramp_ret(rax: retWords[0], xmm0: Double(bitPattern: retWords[2]))
    }
}
