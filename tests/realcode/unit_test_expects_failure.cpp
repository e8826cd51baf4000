// expect: clean
// Expected: no finding: the test expects the first destroy to fail (its mock makes it), so the stream stays
// usable; the host allocation is checked by ASSERT_NE on its pointer. Got: SG603 at the synchronize and the second
// destroy (the failing destroy taken to succeed), and SG701 at the allocation.
#include <gtest/gtest.h>
#include "acl/acl.h"
TEST(StreamTest, DestroyFailsWhileMocked)
{
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    void *host = nullptr;
    aclrtMallocHost(&host, 64);
    ASSERT_NE(host, nullptr);
    aclError ret = aclrtDestroyStream(stream);
    EXPECT_NE(ret, ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}
