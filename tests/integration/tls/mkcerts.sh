#!/usr/bin/env bash
# mkcerts.sh DIR: a test CA and what TLS tests need from it, in DIR.
#   ca.pem                       the CA; trust.p12 holds it for Java (keytool), password "secret"
#   server.{pem,key,p12}         CN=localhost, SAN localhost and 127.0.0.1
#   renewed.{pem,key,p12}        the same names, O=Tumbler renewed (a certificate put in its place)
#   named.{pem,key,p12}          CN=localhost, SAN localhost alone (valid for the name, not the address)
#   misnamed.{pem,key,p12}       CN=other.invalid, SAN other.invalid alone (ours, for another host)
#   client.{pem,key,p12}         CN=client,OU=test,O=Tumbler
#   other.{pem,key,p12}          CN=other (a subject an ACL can name in zkCli, which splits at commas)
#   odd.{pem,key,p12}            a subject with a multi-valued RDN, attributes RFC 2253 has no
#                                keyword for, characters to escape and a non-ASCII one
#   client.pem.key               the client's key and chain in one PEM file
#   nameless.{pem,key,p12}       an empty subject, the name in the SAN alone (critical, RFC 5280)
#   rogue.{pem,key,p12}          a client signed by a CA nobody trusts
#   inter.{pem,key}              an intermediate CA the test CA signed
#   underinter.{pem,key,p12}     a client the intermediate CA signed (trusted by a store of
#                                inter.pem alone, as Java trusts every certificate of a store)
# Every .p12 has the password "secret"; the keys are unencrypted PEM.
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
pw=secret
days=3650

ossl() { openssl "$@" 2> /dev/null || { echo "openssl $1 failed" >&2; openssl "$@"; }; }

# ca NAME SUBJECT
ca()
{
    ossl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days "$days" \
        -subj "$2" -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign
}

# leaf NAME SUBJECT CA EXTFILE-LINES
leaf()
{
    ossl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" -utf8
    printf '%s\n' "$4" > "$1.ext"
    ossl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial \
        -out "$1.pem" -days "$days" -extfile "$1.ext"
    ossl pkcs12 -export -in "$1.pem" -inkey "$1.key" -certfile "$3.pem" -name "$1" \
        -out "$1.p12" -passout "pass:$pw"
    cat "$1.key" "$1.pem" > "$1.pem.key"
    rm -f "$1.csr" "$1.ext"
}

ca ca "/O=Tumbler/CN=Tumbler test CA"
ca rogueca "/O=Rogue/CN=Rogue CA"
leaf server "/O=Tumbler/CN=localhost" ca \
    "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
leaf renewed "/O=Tumbler renewed/CN=localhost" ca \
    "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth"
leaf named "/O=Tumbler/CN=localhost" ca \
    "subjectAltName=DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
leaf misnamed "/O=Tumbler/CN=other.invalid" ca \
    "subjectAltName=DNS:other.invalid
extendedKeyUsage=serverAuth,clientAuth"
leaf client "/O=Tumbler/OU=test/CN=client" ca "extendedKeyUsage=clientAuth"
leaf other "/CN=other" ca "extendedKeyUsage=clientAuth"
leaf odd '/DC=example/O=Tumbler, Inc./L=Zürich/OU=test+UID=u1/CN=odd=name#1 <x>;"q"\\/emailAddress=a@b.c/title=Dr/street=Main St' \
    ca "extendedKeyUsage=clientAuth"
leaf nameless / ca "subjectAltName=critical,DNS:nameless
extendedKeyUsage=clientAuth"
leaf rogue "/O=Rogue/CN=rogue" rogueca "extendedKeyUsage=clientAuth"
leaf inter "/O=Tumbler/CN=Tumbler intermediate CA" ca "basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign"
leaf underinter "/O=Tumbler/CN=underinter" inter "extendedKeyUsage=clientAuth"
rm -f trust.p12
keytool -importcert -noprompt -alias ca -file ca.pem -keystore trust.p12 \
    -storetype PKCS12 -storepass "$pw" > /dev/null 2>&1
