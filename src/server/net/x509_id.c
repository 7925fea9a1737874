/* A certificate subject written as Java's X500Principal.getName() writes
 * it, since ZooKeeper's X509AuthenticationProvider takes that string as
 * the x509 id that ACLs and X509AuthenticationProvider.superUser name:
 *
 *   - RFC 2253's order: the last RDN first, a multi-valued RDN's
 *     attributes in their encoded order, joined by '+';
 *   - the keywords RFC 2253 knows (CN, C, L, ST, O, OU, STREET, DC, UID);
 *     any other attribute as its OID, e.g. emailAddress as
 *     1.2.840.113549.1.9.1;
 *   - a value of such a keyword in one of the string types as UTF-8, with
 *     , = + < > # ; " \ escaped by '\', a NUL as \00, and leading and
 *     trailing spaces (and CRs) escaped; any other value as '#' and the
 *     lowercase hex of its DER (tag, length, contents).
 *
 * OpenSSL's own RFC 2253 printing differs in each of these (short names
 * such as emailAddress, '=' and '#' left as they are, the attributes of
 * a multi-valued RDN reversed). */
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <string.h>

#include "server/net/tls_ctx.h"

static const char *keyword(int nid)
{
    switch (nid) {
    case NID_commonName:
        return "CN";
    case NID_countryName:
        return "C";
    case NID_localityName:
        return "L";
    case NID_stateOrProvinceName:
        return "ST";
    case NID_organizationName:
        return "O";
    case NID_organizationalUnitName:
        return "OU";
    case NID_streetAddress:
        return "STREET";
    case NID_domainComponent:
        return "DC";
    case NID_userId:
        return "UID";
    default:
        return NULL;
    }
}

static int is_string(int type)
{
    switch (type) {
    case V_ASN1_PRINTABLESTRING:
    case V_ASN1_T61STRING:
    case V_ASN1_IA5STRING:
    case V_ASN1_GENERALSTRING:
    case V_ASN1_BMPSTRING:
    case V_ASN1_UTF8STRING:
        return 1;
    default:
        return 0;
    }
}

static void put_char(BIO *b, char c)
{
    BIO_write(b, &c, 1);
}

static int put_hex(BIO *b, const ASN1_STRING *v)
{
    ASN1_TYPE *t = ASN1_TYPE_new();
    unsigned char *der = NULL;
    int n = -1, i;

    if (t != NULL && ASN1_TYPE_set1(t, ASN1_STRING_type(v), v) == 1)
        n = i2d_ASN1_TYPE(t, &der);
    ASN1_TYPE_free(t);
    if (n < 0)
        return -1;
    put_char(b, '#');
    for (i = 0; i < n; i++)
        BIO_printf(b, "%02x", der[i]);
    OPENSSL_free(der);
    return 0;
}

static int put_text(BIO *b, const ASN1_STRING *v)
{
    unsigned char *u = NULL;
    int n = ASN1_STRING_to_UTF8(&u, v), lead = 0, trail, i;

    if (n < 0)
        return -1;
    while (lead < n && (u[lead] == ' ' || u[lead] == '\r'))
        lead++;
    trail = n - 1;
    while (trail >= lead && (u[trail] == ' ' || u[trail] == '\r'))
        trail--;
    for (i = 0; i < n; i++) {
        if (u[i] == '\0') {
            BIO_puts(b, "\\00");
            continue;
        }
        if (i < lead || i > trail || strchr(",=+<>#;\"\\", u[i]) != NULL)
            put_char(b, '\\');
        put_char(b, (char)u[i]);
    }
    OPENSSL_free(u);
    return 0;
}

static int put_attribute(BIO *b, const X509_NAME_ENTRY *e)
{
    const ASN1_OBJECT *o = X509_NAME_ENTRY_get_object(e);
    const ASN1_STRING *v = X509_NAME_ENTRY_get_data(e);
    const char *k = keyword(OBJ_obj2nid(o));
    char oid[128];

    if (k == NULL && OBJ_obj2txt(oid, sizeof oid, o, 1) <= 0)
        return -1;
    BIO_printf(b, "%s=", k != NULL ? k : oid);
    if (k != NULL && is_string(ASN1_STRING_type(v)))
        return put_text(b, v);
    return put_hex(b, v);
}

int tls_subject_id(const X509_NAME *n, BIO *out)
{
    int last = X509_NAME_entry_count(n) - 1, first, i, set;

    for (; last >= 0; last = first - 1) {
        set = X509_NAME_ENTRY_set(X509_NAME_get_entry(n, last));
        first = last;
        while (first > 0 &&
               X509_NAME_ENTRY_set(X509_NAME_get_entry(n, first - 1)) == set)
            first--;
        for (i = first; i <= last; i++) {
            if (i > first)
                put_char(out, '+');
            if (put_attribute(out, X509_NAME_get_entry(n, i)) != 0)
                return -1;
        }
        if (first > 0)
            put_char(out, ',');
    }
    return 0;
}
