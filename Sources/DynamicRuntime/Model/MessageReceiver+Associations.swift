import CDynamicRuntime

extension MessageReceiver {
    /// Associates a Swift value with the object until it is deallocated or the key is reset
    /// (nil removes it). Runtime objects passed as `Object` are retained.
    ///
    /// - Returns: false, storing and retaining nothing, for the nil object, for a small
    ///   (tagged) object, which has no storage of its own, and for an object being deallocated (from a dealloc observer, its own or its ivars' and associated
    ///   values'): its associations are being released, so a new one would leak.
    @discardableResult
    public func setAssociatedValue(_ value: Any?, for key: AssociationKey) -> Bool {
        guard let raw = receiver.raw, !sf_object_isTagged(raw) else { return false }
        if value != nil, ObjectLifecycle.isDeallocating(raw) { return false }
        switch value {
        case nil:
            ObjectSideTable.removeValue(for: key.rawKey, of: raw)
        case let object as Object:
            sf_retain_inline(object.raw)
            ObjectSideTable.store(.object(object.raw), for: key.rawKey, of: raw)
        case let some?:
            ObjectSideTable.store(.swift(some), for: key.rawKey, of: raw)
        }
        return true
    }

    /// The value associated under `key`, if any.
    public func associatedValue(for key: AssociationKey) -> Any? {
        guard let raw = receiver.raw, let table = ObjectSideTable.of(raw, create: false) else { return nil }
        switch table.get(key.rawKey) {
        case nil: return nil
        case let .swift(v)?: return v
        case .object?, .unretained?:
            return table.getRetainedObject(key.rawKey).map { Object(adopting: $0) }
        }
    }

    /// Runs `body` once when the object is deallocated, before its ivars and associations go.
    /// Observers run in registration order. Returns nil if the object is already deallocating,
    /// is a class object or a small (tagged) object (neither is ever deallocated).
    ///
    /// The object passed to `body` must not be retained beyond the call.
    @discardableResult
    public func onDeallocate(_ body: @escaping @Sendable (ObjectRef) -> Void) -> DeallocObserverToken? {
        guard let raw = receiver.raw else { return nil }
        if sf_object_flags(raw) & UInt32(SF_OBJ_IMMORTAL | SF_OBJ_DEALLOCATING) != 0 { return nil }
        return ObjectSideTable.add(to: raw) { $0.addObserver(body) }
    }

    /// Removes a dealloc observer; false if it already ran or was removed.
    @discardableResult
    public func removeDeallocObserver(_ token: DeallocObserverToken) -> Bool {
        guard let raw = receiver.raw, let table = ObjectSideTable.of(raw, create: false) else { return false }
        guard let removed = table.removeObserver(token) else { return false }
        ObjectSideTable.dropIfUnused(raw, table)
        // Dropped last: the closure's captures may own the object.
        withExtendedLifetime(removed) {}
        return true
    }
}
