import CShims
import Synchronization

/// The body a closure IMP runs: (return storage, argument pointers incl. self and _cmd).
@usableFromInline
typealias ClosureBody = (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void

/// A libffi closure that turns a Swift closure into a C-callable IMP for one signature.
final class ClosureIMP: @unchecked Sendable {
    let closure: UnsafeMutableRawPointer
    let entry: sf_imp
    let signature: Signature
    let body: ClosureBody

    init(signature: Signature, body: @escaping ClosureBody) throws(RuntimeError) {
        var code: UnsafeMutableRawPointer?
        guard let closure = sf_ffi_closure_alloc(&code), let code else {
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not allocate a closure")
        }
        self.closure = closure
        self.entry = unsafeBitCast(code, to: sf_imp.self)
        self.signature = signature
        self.body = body
        let status = sf_ffi_prep_closure(closure, &signature.storage.raw.pointee.cif, closureEntry,
                                         Unmanaged.passUnretained(self).toOpaque(), code)
        guard status == FFI_OK else {
            sf_ffi_closure_free(closure)
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not prepare a closure (status \(status.rawValue))")
        }
        sf_counter_closures_add(1)
    }

    deinit {
        sf_ffi_closure_free(closure)
        sf_counter_closures_add(-1)
    }

    var imp: IMP { IMP(pointer: entry, owner: self) }
}

private let closureEntry: @convention(c) (
    UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
) -> Void = { _, ret, args, userData in
    // The method table keeps the box alive for as long as the IMP is reachable.
    Unmanaged<ClosureIMP>.fromOpaque(userData!)._withUnsafeGuaranteedRef { box in
        let receiverClass = Runtime.receiverClass(args!)
        do {
            try box.body(ret!, args!)
        } catch {
            // Errors cannot unwind through C frames: the caller gets zero and the sender the error.
            // A C caller that called the IMP itself reads it with sf_last_error().
            ret!.initializeMemory(as: UInt8.self, repeating: 0, count: box.signature.storage.returnSize)
            let e = Runtime.wrap(error, receiverClass: receiverClass, args!)
            e.record()
            Runtime.raise(e)
        }
    }
}
