"""What every distributed store reports about its place in the job."""

__all__ = ['GroupMember']


class GroupMember:
    """Mixin for stores that joined a job: ``type`` from ``self._name``, ``rank`` and
    ``num_workers`` from ``self._group`` (a :class:`~neomx.kvstore.rendezvous.Group`)."""

    @property
    def type(self):
        return self._name

    @property
    def rank(self):
        return self._group.rank

    @property
    def num_workers(self):
        return self._group.num_workers
