#!/usr/bin/python3
"""/zookeeper/config read five ways on one server: getData, exists, getACL and multiRead (a
getData inside it) give one stat, and multiRead the same data as getData.
  config_views.py HOST:PORT       (Debian's python3-kazoo; exit 1 if they differ)
"""
import sys
from kazoo.client import KazooClient
from kazoo.protocol.serialization import (GetData, MultiHeader, ZnodeStat, multiheader_struct,
                                          read_buffer, stat_struct)


class MultiRead(object):
    """multiRead (opcode 22) of one getData, which kazoo 2.8 does not send itself."""
    type = 22

    def __init__(self, path):
        self.path = path

    def serialize(self):
        return (MultiHeader(GetData.type, False, -1).serialize() +
                GetData(self.path, False).serialize() + multiheader_struct.pack(-1, True, -1))

    @classmethod
    def deserialize(cls, b, offset):
        header, offset = MultiHeader.deserialize(b, offset)
        data, offset = read_buffer(b, offset)
        return data, ZnodeStat._make(stat_struct.unpack_from(b, offset))


path = "/zookeeper/config"
c = KazooClient(hosts=sys.argv[1], timeout=10)
c.start(timeout=10)
data, st = c.get(path)
views = {"exists": c.exists(path), "getACL": c.get_acls(path)[1]}
r = c.handler.async_result()
c._call(MultiRead(path), r)
mdata, views["multiRead"] = r.get(timeout=10)
c.stop()
bad = [k for k, v in views.items() if v != st]
if mdata != data:
    bad.append("multiRead's data")
print("getData: %d bytes, dataVersion %d; %s" % (len(data), st.version,
      "the same stat from " + ", ".join(views) + " and the same data from multiRead" if not bad
      else "different: " + ", ".join(bad)))
sys.exit(1 if bad or not data else 0)
