"""Every function traced in these tests is also checked by adcore's type checker."""

import adcore.typecheck

adcore.typecheck.CHECK_TYPES = True
