import CDynamicRuntime
import Synchronization

/// The body a closure IMP runs: (return storage, argument pointers incl. self and _cmd).
@usableFromInline
typealias ClosureBody = (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void

/// A closure method's body erased to registers, for signatures whose arguments all travel in
/// integer registers: (receiver, selector, up to four argument words) → the bits of the return
/// register (integer, double or float). Built by the typed `addMethod` overloads.
@usableFromInline
typealias WordBody = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) throws -> UInt64

/// Turns a Swift closure into a C-callable IMP for one signature: a trampoline slot (x86-64,
/// `sf_tramp.h`) where the signature allows, else a libffi closure.
@usableFromInline
final class ClosureIMP: @unchecked Sendable {
    /// The libffi closure, or nil for a trampoline.
    let closure: UnsafeMutableRawPointer?
    /// The spill entry's context (handler, owner, layout), or nil.
    let context: UnsafeMutablePointer<sf_tramp_context>?
    /// Whether calls enter through a trampoline slot (not a libffi closure).
    let isTrampoline: Bool
    let entry: sf_imp
    let signature: Signature
    let body: ClosureBody
    /// The same body over registers, when the typed overload could build it and trampolines
    /// are on (`hasWordBody`): the slot's thunk and typed sends call it without an argument
    /// vector. Not optional: an optional closure is stored at maximal abstraction, and every
    /// call through it would allocate a reabstraction thunk.
    @usableFromInline let wordBody: WordBody
    @usableFromInline let hasWordBody: Bool
    /// An all-`Int` body at its own type (an `IntMethodBody<n>`, kept by `directBox`): the
    /// slot's thunk and typed sends call its closure directly, not through `wordBody`.
    @usableFromInline let direct: UnsafeRawPointer?
    /// Whether the entry is a slot over a non-throwing `Int` body's thunk, which only moves
    /// registers: callers may call it as a plain C function, no error can come back.
    let entersAsPlainFunction: Bool
    private let directBox: AnyObject?
    /// The class the method was made for, which an error from a call through the IMP names:
    /// the IMP never reads its receiver (C may call it with any word as `self`, and the body
    /// may free the receiver before it throws). Sends name the receiver's class themselves.
    let ownerName: String?
    /// Whether `IntBodyOwners` maps this body's closure words to `ownerName`.
    private let listsIntOwner: Bool

    /// A register entry chosen by the caller (a hook's): the slot loads `context` into the
    /// register `kind` names and jumps to `target`; `body` still serves every other caller.
    struct RegisterEntry {
        let kind: Int32
        let target: UnsafeRawPointer
        let context: UnsafeRawPointer
    }

    init(signature: Signature, owner: String? = nil, registerEntry: RegisterEntry? = nil, body: @escaping ClosureBody,
         wordBody: WordBody? = nil, direct: DirectIntBody? = nil) throws(RuntimeError) {
        self.signature = signature
        self.ownerName = owner
        self.body = body
        let trampolines = sf_tramp_enabled() != 0
        // SF_TRAMPOLINES=0 turns off every register fast path, so the fallback is measured whole;
        // the direct `Int` path also needs the closure layout its C thunks read.
        let direct = trampolines && IntBodyLayout.holds ? direct : nil
        self.hasWordBody = trampolines && (wordBody != nil || direct != nil)
        self.wordBody = hasWordBody && wordBody != nil ? wordBody! : { _, _, _, _, _, _ in 0 }
        self.directBox = direct?.box
        self.direct = direct.map { UnsafeRawPointer(ObjectWord(unretained: $0.box).pointer) }
        // A throwing `Int` body's C thunk finds the owner's name through its closure words.
        self.listsIntOwner = owner != nil && trampolines && signature.storage.layout != nil && registerEntry == nil
            && direct.map { !$0.nonThrowing && $0.arity < 4 } == true
        if listsIntOwner, let owner, let direct { IntBodyOwners.add(direct.closureWords, owner) }
        self.entersAsPlainFunction = trampolines && signature.storage.layout != nil && registerEntry == nil
            && direct.map { $0.nonThrowing && $0.arity < 4 } == true
        if trampolines, let layout = signature.storage.layout {
            let code: UnsafeMutableRawPointer?
            let ints = Int(layout.pointee.int_only)
            let nargs = signature.argumentTypes.count
            if let registerEntry {
                self.context = nil
                code = sf_tramp_alloc_kind(registerEntry.kind, UnsafeMutableRawPointer(mutating: registerEntry.context),
                                           registerEntry.target)
            } else if let direct, direct.arity < 4 {
                // The `Int` body takes the registers as they are; the closure's own words go in
                // the next one (its C thunk reads the receiver's class and checks for an error
                // only when it can throw).
                self.context = nil
                if direct.nonThrowing, let function = direct.contextFreeFunction {
                    code = sf_tramp_alloc_kind(Int32(SF_TRAMP_DROP0 + direct.arity), function, function)
                } else {
                    code = direct.nonThrowing
                        ? sf_tramp_alloc_kind(Int32(direct.arity + 1), direct.closureWords, nonThrowingIntThunk(arity: direct.arity))
                        : sf_tramp_alloc_kind(Int32(direct.arity + 1), direct.closureWords, intThunk(arity: direct.arity))
                }
            } else if hasWordBody, direct == nil, (2...5).contains(nargs) {
                // The typed body takes the registers as they are; the context goes in the next one.
                self.context = nil
                code = sf_tramp_alloc_kind(Int32(nargs - 1), nil, wordThunk(nargs: nargs, returns: signature.returnType))
            } else if (2...5).contains(ints) {
                // Integer registers only: the slot hands this object to a thunk in the first
                // free argument register; every argument stays where the caller put it.
                self.context = nil
                code = sf_tramp_alloc_kind(Int32(ints - 1), nil, registerThunks[ints - 2])
            } else {
                let context = UnsafeMutablePointer<sf_tramp_context>.allocate(capacity: 1)
                context.initialize(to: sf_tramp_context(handler: trampolineEntry, owner: nil, layout: layout))
                self.context = context
                code = sf_tramp_alloc(context, CFunction.address(of: sf_tramp_entry as @convention(c) () -> Void))
            }
            guard let code else {
                context?.deallocate()
                if listsIntOwner, let direct { IntBodyOwners.remove(direct.closureWords) }
                throw .implementationFailed(.init(reason: "no trampoline slot could be mapped"))
            }
            self.closure = nil
            self.isTrampoline = true
            self.entry = CFunction.at(code, as: sf_imp.self)
            let me = ObjectWord(unretained: self).pointer
            if let context {
                context.pointee.owner = me
            } else if registerEntry == nil, direct == nil || direct!.arity >= 4 {
                sf_tramp_set_context(code, me)
            }
            sf_counter_closures_add(1)
            return
        }
        var code: UnsafeMutableRawPointer?
        guard let closure = sf_ffi_closure_alloc(&code), let code else {
            throw .implementationFailed(.init(reason: "libffi could not allocate a closure"))
        }
        self.closure = closure
        self.context = nil
        self.isTrampoline = false
        self.entry = CFunction.at(code, as: sf_imp.self)
        let status = sf_ffi_prep_closure(closure, &signature.storage.raw.pointee.cif, closureEntry,
                                         ObjectWord(unretained: self).pointer, code)
        guard status == FFI_OK else {
            sf_ffi_closure_free(closure)
            throw .implementationFailed(.init(reason: "libffi could not prepare a closure (status \(status.rawValue))"))
        }
        sf_counter_closures_add(1)
    }

    deinit {
        if listsIntOwner, let directBox { IntBodyOwners.remove(ClosureWords.of(directBox)) }
        if let closure {
            sf_ffi_closure_free(closure)
        } else {
            // The slot is reused only after a grace period; the context goes with this object,
            // which nothing can call any more (its owners let go after their own grace period).
            sf_tramp_free(UnsafeMutableRawPointer(mutating: CFunction.address(of: entry)))
            context?.deallocate()
        }
        sf_counter_closures_add(-1)
    }

    var imp: IMP { IMP(pointer: entry, owner: self) }

    /// Whether calls reach an `Int` body at its own type (tests).
    var hasDirectIntBody: Bool { direct != nil }

    /// Runs the body for a call from C (errors cannot unwind through C frames: the caller gets
    /// zero and the sender the error; a C caller that called the IMP itself reads it with
    /// sf_last_error()).
    @inline(__always)
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        do {
            try body(ret, args)
        } catch {
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
            let e = Runtime.wrap(error, className: ownerName, args)
            e.record()
            Runtime.raise(e)
        }
    }
}

private let closureEntry: @convention(c) (
    UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
) -> Void = { _, ret, args, userData in
    // The method table keeps the box alive for as long as the IMP is reachable.
    ObjectWord<ClosureIMP>(userData!).withObject { $0.run(ret!, args!) }
}

/// What `sf_tramp_entry` calls: the argument vector points into the spilled registers and the
/// caller's stack, so nothing is copied and nothing allocated.
private let trampolineEntry: sf_tramp_handler = { context, frame in
    let context = context!.assumingMemoryBound(to: sf_tramp_context.self)
    let layout = context.pointee.layout!
    withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: Int(layout.pointee.nargs)) { args in
        let ret = sf_tramp_frame_args(frame, layout, args.baseAddress)!
        ObjectWord<ClosureIMP>(context.pointee.owner!).withObject { $0.run(ret, args.baseAddress!) }
        sf_tramp_frame_return(frame, layout)
    }
}

// Written by scripts/generate-register-thunks.py (registerThunks): edit the script, not these lines.
/// The register-class thunks: (integer argument registers…, this object) for signatures whose
/// arguments are all integer scalars in registers, by count of registers (2-5).
nonisolated(unsafe) private let registerThunks: [UnsafeRawPointer] = [
    CFunction.address(of: { (a0, a1, c) in
        callBody(c!, a0, a1, 0, 0, 0)
    } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, c) in
        callBody(c!, a0, a1, a2, 0, 0)
    } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, a3, c) in
        callBody(c!, a0, a1, a2, a3, 0)
    } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    CFunction.address(of: { (a0, a1, a2, a3, a4, c) in
        callBody(c!, a0, a1, a2, a3, a4)
    } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
]
// End of registerThunks.

/// Runs the body over the registers stored in this frame; the word it returns goes to %rax.
@inline(__always)
private func callBody(_ owner: UnsafeRawPointer, _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64) -> UInt64 {
    withIntegerRegisterFrame(a0, a1, a2, a3, a4) { ret, args in
        ObjectWord<ClosureIMP>(owner).withObject { $0.run(ret, args) }
    }
}
