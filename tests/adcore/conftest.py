"""Every function traced in these tests is also checked by adcore's type checker."""

import adcore.api

adcore.api.CHECK_TYPES = True
