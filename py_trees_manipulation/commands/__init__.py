"""``ptm`` subcommands that front a lower package: ``ptm serve`` and the hardware run flags
(:mod:`.hardware`), ``ptm robots`` (:mod:`.robots`). They sit in the front layer so that the packages
they front (:mod:`..hardware`, :mod:`..robots`) stay below the loader and the interop helpers."""
