"""Where a resource records that the engine holds a physical lock on it."""
PHYSICAL_LOCK_FLAG = "heatweb_physically_locked"
